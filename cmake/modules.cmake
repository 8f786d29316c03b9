# The module table: one entry per folder src/<module>, in dependency order (a module may use
# only modules listed above it, so there can be no circle). Read by the build (CMakeLists.txt:
# one OBJECT library per module, linked to the modules it USES) and by cmake/depcheck.cmake
# (the include check that fails the build, the symbol check, and the picture in
# docs/DESIGN.md). Whatever a module USES, it may also use what those use.
#
#   ek_module(NAME [USES m...] [PUBLIC h...] [SHARED h...] [APART])
#     USES    the modules it may use (directly; the rest comes with them)
#     PUBLIC  its public headers, include/etmkit/<h> (and include/etmkit/low/<h> for bit-level
#             state that programs may embed); a header of a module is part of that module
#     SHARED  its headers under src/<module>/ that the modules above it may include (the
#             library's internal interfaces); every other header there is private to it
#     APART   not part of libetmkit (its own library target, using the library)
#
# A file added to a listed folder needs no edit here; a new folder or a new public header does.
include(${CMAKE_CURRENT_LIST_DIR}/module_rules.cmake)

ek_module(core
  PUBLIC etmkit.h sbuf.h diag.h config.h elem.h mapfile.h
  SHARED bytes.h vec.h hot.h mapfile.h diagkey.h slots.h)
# bit level: frames, the instruction classifier and the packet parsers that need no code
ek_module(frame USES core PUBLIC frame.h low/frame.h)
ek_module(isa   USES core PUBLIC isa.h)
ek_module(etm4  USES core PUBLIC etm4.h low/etm4.h)
ek_module(stm   USES core PUBLIC stm.h low/stm.h)
ek_module(itm   USES core PUBLIC itm.h low/itm.h)
# loaders: perf.data, snapshots, ELF, kallsyms, jitdump
ek_module(input USES core
  PUBLIC perf.h perf_write.h snapshot.h symbols.h ini.h
  SHARED jitdump.h symtab_range.h)
# memory images, and the flow decoders' code access through them (ek_flow_mem)
ek_module(image USES core input PUBLIC image.h)
# instruction flow: ETMv4/ETE's decoder, and PTM's and ETMv3's (parser and waypoint walker
# together); each reads code through image's ek_flow_mem and classifies with isa
ek_module(flow  USES core isa etm4 image PUBLIC flow.h)
ek_module(ptm   USES isa image PUBLIC ptm.h low/ptm.h SHARED walk.h)
ek_module(etm3  USES ptm PUBLIC etm3.h low/etm3.h)
# the decode tree: bytes -> frames -> per-trace-ID parsers and flow decoders
ek_module(decode USES frame etm4 stm itm flow ptm etm3 input PUBLIC decode.h)
# samples from elements
ek_module(synth USES decode PUBLIC synth.h filter.h stacks.h calltree.h)
# PGO profiles: consume samples
ek_module(profile USES synth PUBLIC profile.h)
# perf.data sessions: queues, AUX slices, sideband, threads and maps
ek_module(session USES synth PUBLIC session.h account.h)
# text: listings, element formats, perf-script text, perf.data dumps
ek_module(output USES session profile
  PUBLIC listing.h script.h perf_dump.h inject.h account_out.h flame.h perfetto.h)
# the simulator behind `etmkit gen`: library target etmkit_sim, public header in
# src/sim/include/etmkit/sim.h. Its encoders (ETMv4/ETE, PTM, ETMv3) are its own; it uses the
# perf.data writer (input), the classifier (isa) and the v7 configurations (ptm, etm3)
ek_module(sim APART USES input isa ptm etm3 PUBLIC sim.h)

# Temporary exceptions: exact (file, included header) and (module, symbol) pairs that break the
# rules only because of work in flight. Each names why; delete it when that work has landed
# (the check warns about an exception that nothing needs any more).
# (none today)
