# Installation (`make install PREFIX=... DESTDIR=...`, or `cmake --install BUILD [--prefix P]`
# with DESTDIR in the environment), in the GNU layout under the prefix:
#   bin/etmkit                                the CLI (libetmkit linked in statically)
#   lib/libetmkit.a, lib/libetmkit.so.*       the library: static, and shared with its soname
#   include/etmkit/*.h                        the public headers
#   lib/pkgconfig/etmkit.pc                   for pkg-config --cflags --libs etmkit
#   share/man/man1/etmkit*.1                  etmkit(1) and etmkit-<command>(1) per command
#   share/bash-completion/completions/etmkit  bash completion
include(GNUInstallDirs)

install(TARGETS etmkit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# etmkit-fleet (Python 3 over Dask's distributed; Debian: python3-distributed): the build writes
# it beside the CLI with the version filled in; installed beside etmkit, which it runs.
configure_file(${PROJECT_SOURCE_DIR}/tools/fleet/etmkit-fleet ${PROJECT_BINARY_DIR}/etmkit-fleet
  @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
  WORLD_READ WORLD_EXECUTE)
install(PROGRAMS ${PROJECT_BINARY_DIR}/etmkit-fleet DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS etmkit etmkit_shared
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/etmkit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_SOURCE_DIR}/tools/bash-completion/etmkit
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

# etmkit.pc is written at install time, so that it names the prefix installed to (which
# `cmake --install --prefix` may change after configuration).
set(ETMKIT_PC_REQUIRES "libelf libdw libzstd")
if(CAPSTONE_FOUND)
  string(APPEND ETMKIT_PC_REQUIRES " capstone")
endif()
install(CODE "
  set(prefix \"\${CMAKE_INSTALL_PREFIX}\")
  set(libdir \"${CMAKE_INSTALL_LIBDIR}\")
  set(includedir \"${CMAKE_INSTALL_INCLUDEDIR}\")
  foreach(dir libdir includedir)
    if(NOT IS_ABSOLUTE \"\${\${dir}}\")
      set(\${dir} \"\\\${prefix}/\${\${dir}}\")
    endif()
  endforeach()
  set(ETMKIT_VERSION \"${PROJECT_VERSION}\")
  set(ETMKIT_PC_REQUIRES \"${ETMKIT_PC_REQUIRES}\")
  set(pc \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig/etmkit.pc\")
  message(STATUS \"Installing: \${pc}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/cmake/etmkit.pc.in\" \"\${pc}\" @ONLY)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${pc}\")
")

# Manual pages: help2man on the built CLI's --help texts (tools/man/gen-man), so that they
# follow the options the program has. Without help2man the build goes on without them.
find_program(ETMKIT_HELP2MAN help2man)
if(ETMKIT_HELP2MAN)
  set(ETMKIT_MAN_DIR ${PROJECT_BINARY_DIR}/man)
  add_custom_command(OUTPUT ${ETMKIT_MAN_DIR}/etmkit.1
    COMMAND sh ${PROJECT_SOURCE_DIR}/tools/man/gen-man $<TARGET_FILE:etmkit_cli> ${ETMKIT_MAN_DIR}
            ${ETMKIT_HELP2MAN}
    DEPENDS etmkit_cli ${PROJECT_SOURCE_DIR}/tools/man/gen-man
    COMMENT "Generating manual pages with help2man" VERBATIM)
  add_custom_target(etmkit_man ALL DEPENDS ${ETMKIT_MAN_DIR}/etmkit.1)
  install(DIRECTORY ${ETMKIT_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
    FILES_MATCHING PATTERN "*.1")
  # etmkit-fleet's page, from its --help (argparse: needs python3, not Dask)
  if(EXISTS /usr/bin/python3)
    set(ETMKIT_FLEET_MAN ${PROJECT_BINARY_DIR}/man-fleet/etmkit-fleet.1)
    add_custom_command(OUTPUT ${ETMKIT_FLEET_MAN}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man-fleet
      COMMAND ${ETMKIT_HELP2MAN} --no-info --no-discard-stderr
              --name=profiles\ from\ many\ CoreSight\ recordings,\ on\ Dask
              -o ${ETMKIT_FLEET_MAN} ${PROJECT_BINARY_DIR}/etmkit-fleet
      DEPENDS ${PROJECT_SOURCE_DIR}/tools/fleet/etmkit-fleet
      COMMENT "Generating etmkit-fleet(1) with help2man" VERBATIM)
    add_custom_target(etmkit_fleet_man ALL DEPENDS ${ETMKIT_FLEET_MAN})
    install(FILES ${ETMKIT_FLEET_MAN} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  else()
    message(STATUS "no /usr/bin/python3: no manual page for etmkit-fleet")
  endif()
else()
  message(STATUS "help2man not found: no manual pages (apt-get install help2man)")
endif()
