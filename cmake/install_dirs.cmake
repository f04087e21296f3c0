# install_dirs.cmake - where `cmake --install` puts things (GNUInstallDirs;
# cmake/install.cmake does it, docs/install.md describes it), and how
# memprof finds its own files from where it runs.
#
# The preload library and the demo's program are memprof's own, in private
# directories. memprof finds both relative to its own executable
# (src/cli/beside_exe.c), in an install prefix and in this build tree, so
# the paths below are relative: from bin/ in a prefix, from src/cli/ here.
# (GNUInstallDirs' directories must then stay relative to the prefix.)
include(GNUInstallDirs)
set(MEMPROF_INSTALL_PRELOADDIR ${CMAKE_INSTALL_LIBDIR}/memprof)
set(MEMPROF_INSTALL_HELPERDIR ${CMAKE_INSTALL_LIBEXECDIR}/memprof)
foreach(d CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_LIBEXECDIR)
  if(IS_ABSOLUTE "${${d}}")
    message(FATAL_ERROR "memprof: ${d} must be relative to the prefix (memprof finds its files from bin/), not ${${d}}")
  endif()
endforeach()
file(RELATIVE_PATH MEMPROF_PRELOAD_INSTALL_REL /p/${CMAKE_INSTALL_BINDIR} /p/${MEMPROF_INSTALL_PRELOADDIR})
file(RELATIVE_PATH MEMPROF_DEMO_INSTALL_REL /p/${CMAKE_INSTALL_BINDIR} /p/${MEMPROF_INSTALL_HELPERDIR})
file(RELATIVE_PATH MEMPROF_PRELOAD_BUILD_REL ${PROJECT_BINARY_DIR}/src/cli ${PROJECT_BINARY_DIR}/allocator_hooks)
file(RELATIVE_PATH MEMPROF_DEMO_BUILD_REL ${PROJECT_BINARY_DIR}/src/cli ${PROJECT_BINARY_DIR}/src/demo)
