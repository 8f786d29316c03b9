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
set(SIMPROG_LINK_EXTRA -shared -Bsymbolic -soname libsima.so)
simprog_link(libsima.so user.lds libsima.o)
set(SIMPROG_LINK_EXTRA -shared -Bsymbolic -soname libsimb.so)
simprog_link(libsimb.so user.lds libsimb.o)
set(SIMPROG_LINK_EXTRA -static -e primary_entry)
simprog_link(vmlinux kernel.lds kernel.o)

set(SIMPROG_IMAGES ${SIMPROG_OUT}/simloop ${SIMPROG_OUT}/simchild ${SIMPROG_OUT}/libsima.so
    ${SIMPROG_OUT}/libsimb.so ${SIMPROG_OUT}/vmlinux)
add_custom_target(etmkit_simprog DEPENDS ${SIMPROG_IMAGES})
add_dependencies(etmkit_objects etmkit_simprog)
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/sim/blobs.c PROPERTIES
  OBJECT_DEPENDS "${SIMPROG_IMAGES}"
  COMPILE_DEFINITIONS "ETMKIT_SIMPROG_DIR=\"${SIMPROG_OUT}\"")
