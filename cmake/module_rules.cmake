# The verbs of the module table (cmake/modules.cmake). They only record; the build
# (CMakeLists.txt) and the check (cmake/depcheck.cmake) read what they recorded:
#   ETMKIT_MODULES             the modules, in table order
#   EKM_<m>_USES / _PUBLIC / _SHARED / _APART / _CLOSURE (the module and all it may use)
#   EKH_<header>               the module owning include/etmkit/<header>
#   ETMKIT_ALLOWED_INCLUDES    "file|header|why" entries; ETMKIT_ALLOWED_SYMBOLS "module|symbol|why"
set(ETMKIT_MODULES "")
set(ETMKIT_ALLOWED_INCLUDES "")
set(ETMKIT_ALLOWED_SYMBOLS "")

macro(ek_module name)
  cmake_parse_arguments(_ekm "APART" "" "USES;PUBLIC;SHARED" ${ARGN})
  if(_ekm_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cmake/modules.cmake: ${name}: unknown words ${_ekm_UNPARSED_ARGUMENTS}")
  endif()
  if(name IN_LIST ETMKIT_MODULES)
    message(FATAL_ERROR "cmake/modules.cmake: ${name} is listed twice")
  endif()
  set(EKM_${name}_CLOSURE ${name})
  foreach(_ekm_use ${_ekm_USES})
    if(NOT _ekm_use IN_LIST ETMKIT_MODULES)
      message(FATAL_ERROR "cmake/modules.cmake: ${name} uses ${_ekm_use}, which is not listed "
                          "above it: arrows point down only, and there are no circles")
    endif()
    list(APPEND EKM_${name}_CLOSURE ${EKM_${_ekm_use}_CLOSURE})
  endforeach()
  list(REMOVE_DUPLICATES EKM_${name}_CLOSURE)
  set(EKM_${name}_USES ${_ekm_USES})
  set(EKM_${name}_PUBLIC ${_ekm_PUBLIC})
  set(EKM_${name}_SHARED ${_ekm_SHARED})
  set(EKM_${name}_APART ${_ekm_APART})
  foreach(_ekm_h ${_ekm_PUBLIC})
    if(DEFINED EKH_${_ekm_h})
      message(FATAL_ERROR "cmake/modules.cmake: ${_ekm_h} is public in ${EKH_${_ekm_h}} and ${name}")
    endif()
    set(EKH_${_ekm_h} ${name})
  endforeach()
  list(APPEND ETMKIT_MODULES ${name})
endmacro()

macro(ek_allow_include file header why)
  string(REPLACE ";" "," _ekm_why "${why}")
  list(APPEND ETMKIT_ALLOWED_INCLUDES "${file}|${header}|${_ekm_why}")
endmacro()

macro(ek_allow_symbol module symbol why)
  string(REPLACE ";" "," _ekm_why "${why}")
  list(APPEND ETMKIT_ALLOWED_SYMBOLS "${module}|${symbol}|${_ekm_why}")
endmacro()
