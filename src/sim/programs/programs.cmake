# Builds the AArch64 programs the simulator executes (src/sim/programs/*) with clang and
# ld.lld, then embeds them into the library (src/sim/blobs.c includes them with .incbin), so
# that `etmkit gen` needs no cross toolchain at run time.
find_program(ETMKIT_CLANG NAMES clang clang-14 REQUIRED)
find_program(ETMKIT_LLD NAMES ld.lld ld.lld-14 REQUIRED)

set(SIMPROG_SRC ${PROJECT_SOURCE_DIR}/src/sim/programs)
set(SIMPROG_OUT ${PROJECT_BINARY_DIR}/simprog)
file(MAKE_DIRECTORY ${SIMPROG_OUT})
set(SIMPROG_CFLAGS --target=aarch64-linux-gnu -ffreestanding -nostdlib -fno-builtin -O2
    -fno-jump-tables -fno-stack-protector -fno-asynchronous-unwind-tables -fno-unwind-tables
    -mgeneral-regs-only -fno-ident -g0 -I${SIMPROG_SRC})
set(SIMPROG_HDRS ${SIMPROG_SRC}/simmeta.h ${SIMPROG_SRC}/simrt.h)

function(simprog_object out src)
  set(extra ${ARGN})
  add_custom_command(OUTPUT ${SIMPROG_OUT}/${out}
    COMMAND ${ETMKIT_CLANG} ${SIMPROG_CFLAGS} ${extra} -c ${SIMPROG_SRC}/${src} -o ${SIMPROG_OUT}/${out}
    DEPENDS ${SIMPROG_SRC}/${src} ${SIMPROG_HDRS} VERBATIM)
endfunction()

simprog_object(crt.o crt.S)
simprog_object(simloop.o simloop.c)
simprog_object(simchild.o simchild.c)
simprog_object(libsima.o libsima.c -fPIC -fvisibility=hidden)
simprog_object(libsimb.o libsimb.c -fPIC -fvisibility=hidden)
simprog_object(kernel.o kernel.S)
simprog_object(simjit.o simjit.c)
simprog_object(jitrt.o jitrt.S)
simprog_object(jitcode.o jitcode.c -fPIC -fvisibility=hidden)
# another build of libsima.so (scenario buildid-mismatch puts it into symfs)
simprog_object(libsima-other.o libsima.c -fPIC -fvisibility=hidden -DSIM_OTHER_BUILD)
# a kernel module (scenario kernel-module), compiled as kbuild compiles modules: no PIC
simprog_object(simmod.o simmod.c -fno-pic -mcmodel=small)

set(SIMPROG_LDFLAGS --build-id=sha1 --no-rosegment -z norelro --hash-style=gnu -z max-page-size=4096)
function(simprog_link out script)
  set(objs ${ARGN})
  set(paths)
  foreach(o ${objs})
    list(APPEND paths ${SIMPROG_OUT}/${o})
  endforeach()
  add_custom_command(OUTPUT ${SIMPROG_OUT}/${out}
    COMMAND ${ETMKIT_LLD} ${SIMPROG_LDFLAGS} ${SIMPROG_LINK_EXTRA} -T ${SIMPROG_SRC}/${script} ${paths} -o ${SIMPROG_OUT}/${out}
    DEPENDS ${paths} ${SIMPROG_SRC}/${script} VERBATIM)
endfunction()

set(SIMPROG_LINK_EXTRA -static -e _start)
simprog_link(simloop exe.lds crt.o simloop.o)
simprog_link(simchild exe.lds crt.o simchild.o)
simprog_link(simjit exe.lds crt.o simjit.o jitrt.o)
set(SIMPROG_LINK_EXTRA -shared -Bsymbolic -soname libsima.so)
simprog_link(libsima.so user.lds libsima.o)
set(SIMPROG_LINK_EXTRA -shared -Bsymbolic -soname libsimb.so)
simprog_link(libsimb.so user.lds libsimb.o)
set(SIMPROG_LINK_EXTRA -shared -Bsymbolic -soname jitcode.so)
simprog_link(jitcode.so user.lds jitcode.o)
set(SIMPROG_LINK_EXTRA -shared -Bsymbolic -soname libsima.so)
simprog_link(libsima-other.so user.lds libsima-other.o)
set(SIMPROG_LINK_EXTRA -static -e primary_entry)
simprog_link(vmlinux kernel.lds kernel.o)
# simmod.ko: the relocatable module (what symfs holds); simmod.loaded: the module as the
# kernel's loader laid it out and relocated it (what runs; simmod.lds)
add_custom_command(OUTPUT ${SIMPROG_OUT}/simmod.ko
  COMMAND ${ETMKIT_LLD} -r --build-id=sha1 ${SIMPROG_OUT}/simmod.o -o ${SIMPROG_OUT}/simmod.ko
  DEPENDS ${SIMPROG_OUT}/simmod.o VERBATIM)
add_custom_command(OUTPUT ${SIMPROG_OUT}/simmod.loaded
  COMMAND ${ETMKIT_LLD} --no-rosegment -z norelro -z max-page-size=4096 -static -e 0
    --build-id=none --just-symbols=${SIMPROG_OUT}/vmlinux -T ${SIMPROG_SRC}/simmod.lds
    ${SIMPROG_OUT}/simmod.ko -o ${SIMPROG_OUT}/simmod.loaded
  DEPENDS ${SIMPROG_OUT}/simmod.ko ${SIMPROG_OUT}/vmlinux ${SIMPROG_SRC}/simmod.lds VERBATIM)

# simreal: a real program for workload-real, PIE and BIND_NOW, linked against stand-ins of
# libc.so.6, libm.so.6, libresolv.so.2 and libgomp.so.1 (the real ones come from Debian's
# libc6-arm64-cross and libgomp1-arm64-cross at gen time);
# pointer authentication and BTI hints, floating point, jump tables allowed
set(SIMREAL_CFLAGS --target=aarch64-linux-gnu -ffreestanding -nostdlib -fno-builtin -O2 -fPIE
    -fno-stack-protector -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-ident -g0
    -mbranch-protection=standard -I${SIMPROG_SRC})
add_custom_command(OUTPUT ${SIMPROG_OUT}/simreal.o
  COMMAND ${ETMKIT_CLANG} ${SIMREAL_CFLAGS} -c ${SIMPROG_SRC}/simreal.c -o ${SIMPROG_OUT}/simreal.o
  DEPENDS ${SIMPROG_SRC}/simreal.c ${SIMPROG_HDRS} VERBATIM)
add_custom_command(OUTPUT ${SIMPROG_OUT}/crt_pie.o
  COMMAND ${ETMKIT_CLANG} ${SIMREAL_CFLAGS} -c ${SIMPROG_SRC}/crt.S -o ${SIMPROG_OUT}/crt_pie.o
  DEPENDS ${SIMPROG_SRC}/crt.S ${SIMPROG_HDRS} VERBATIM)
# simreal_builtins.list names the libc and libm functions simreal binds as builtins: it gives
# the table of builtins (simreal_builtins.c) and the stand-in libraries (a function of each name)
file(STRINGS ${SIMPROG_SRC}/simreal_builtins.list SIMREAL_BUILTINS REGEX "^[cmro] ")
set(SIMREAL_TABLE "/* generated from simreal_builtins.list */\n")
set(SIMREAL_STUB_c "/* generated: link-time stand-in of libc.so.6 */\nvoid *stdout;\n")
set(SIMREAL_STUB_m "/* generated: link-time stand-in of libm.so.6 */\n")
set(SIMREAL_STUB_r "/* generated: link-time stand-in of libresolv.so.2 */\n")
set(SIMREAL_STUB_o "/* generated: link-time stand-in of libgomp.so.1 */\n")
set(SIMREAL_ENTRIES "")
foreach(line ${SIMREAL_BUILTINS})
  string(SUBSTRING "${line}" 0 1 lib)
  string(SUBSTRING "${line}" 2 -1 name)
  string(APPEND SIMREAL_TABLE "extern void ${name}(void);\n")
  string(APPEND SIMREAL_STUB_${lib} "void ${name}(void) {}\n")
  string(APPEND SIMREAL_ENTRIES "    ${name},\n")
endforeach()
string(APPEND SIMREAL_TABLE "void (*const simreal_builtins[])(void) = {\n${SIMREAL_ENTRIES}};\n"
       "const unsigned long simreal_nbuiltins = sizeof simreal_builtins / sizeof simreal_builtins[0];\n")
file(WRITE ${SIMPROG_OUT}/simreal_builtins.c.new "${SIMREAL_TABLE}")
configure_file(${SIMPROG_OUT}/simreal_builtins.c.new ${SIMPROG_OUT}/simreal_builtins.c COPYONLY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${SIMPROG_SRC}/simreal_builtins.list)
set(SIMREAL_SONAME_c libc.so.6)
set(SIMREAL_SONAME_m libm.so.6)
set(SIMREAL_SONAME_r libresolv.so.2)
set(SIMREAL_SONAME_o libgomp.so.1)
foreach(lib c m r o)
  file(WRITE ${SIMPROG_OUT}/lib${lib}_stub.c.new "${SIMREAL_STUB_${lib}}")
  configure_file(${SIMPROG_OUT}/lib${lib}_stub.c.new ${SIMPROG_OUT}/lib${lib}_stub.c COPYONLY)
  add_custom_command(OUTPUT ${SIMPROG_OUT}/lib${lib}_stub.so
    COMMAND ${ETMKIT_CLANG} ${SIMPROG_CFLAGS} -fPIC -c ${SIMPROG_OUT}/lib${lib}_stub.c -o ${SIMPROG_OUT}/lib${lib}_stub.o
    COMMAND ${ETMKIT_LLD} -shared -soname ${SIMREAL_SONAME_${lib}} ${SIMPROG_OUT}/lib${lib}_stub.o -o ${SIMPROG_OUT}/lib${lib}_stub.so
    DEPENDS ${SIMPROG_OUT}/lib${lib}_stub.c VERBATIM)
endforeach()
add_custom_command(OUTPUT ${SIMPROG_OUT}/simreal_builtins.o
  COMMAND ${ETMKIT_CLANG} ${SIMREAL_CFLAGS} -c ${SIMPROG_OUT}/simreal_builtins.c -o ${SIMPROG_OUT}/simreal_builtins.o
  DEPENDS ${SIMPROG_OUT}/simreal_builtins.c VERBATIM)
add_custom_command(OUTPUT ${SIMPROG_OUT}/simreal
  COMMAND ${ETMKIT_LLD} -pie -z now -z noexecstack --hash-style=gnu --build-id=sha1
    -dynamic-linker /lib/ld-linux-aarch64.so.1 -e _start
    ${SIMPROG_OUT}/crt_pie.o ${SIMPROG_OUT}/simreal.o ${SIMPROG_OUT}/simreal_builtins.o
    ${SIMPROG_OUT}/libc_stub.so ${SIMPROG_OUT}/libm_stub.so ${SIMPROG_OUT}/libr_stub.so
    ${SIMPROG_OUT}/libo_stub.so -o ${SIMPROG_OUT}/simreal
  DEPENDS ${SIMPROG_OUT}/crt_pie.o ${SIMPROG_OUT}/simreal.o ${SIMPROG_OUT}/simreal_builtins.o
    ${SIMPROG_OUT}/libc_stub.so ${SIMPROG_OUT}/libm_stub.so ${SIMPROG_OUT}/libr_stub.so
    ${SIMPROG_OUT}/libo_stub.so VERBATIM)

set(SIMPROG_IMAGES ${SIMPROG_OUT}/simloop ${SIMPROG_OUT}/simchild ${SIMPROG_OUT}/libsima.so
    ${SIMPROG_OUT}/libsimb.so ${SIMPROG_OUT}/vmlinux ${SIMPROG_OUT}/simjit ${SIMPROG_OUT}/jitcode.so ${SIMPROG_OUT}/simreal
    ${SIMPROG_OUT}/libsima-other.so ${SIMPROG_OUT}/simmod.ko ${SIMPROG_OUT}/simmod.loaded)
add_custom_target(etmkit_simprog DEPENDS ${SIMPROG_IMAGES})
add_dependencies(etmkit_mod_sim etmkit_simprog)
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/sim/blobs.c PROPERTIES
  OBJECT_DEPENDS "${SIMPROG_IMAGES}"
  COMPILE_DEFINITIONS "ETMKIT_SIMPROG_DIR=\"${SIMPROG_OUT}\"")
