# install.cmake - what `cmake --install BUILD [--prefix P]` puts where
# (docs/install.md). GNUInstallDirs' directories, relative to the prefix:
#
#   bin/memprof                                   the command
#   <libdir>/libmemprof.so.0.1.0 (+ .so.0, .so)   the annotation API (soname libmemprof.so.0)
#   include/memprof/annotate.h                    its header
#   <libdir>/pkgconfig/memprof.pc                 pkg-config --cflags --libs memprof
#   <libdir>/cmake/memprof/                       find_package(memprof): memprof::annotate
#   <libdir>/memprof/libmemprof_preload.so        memprof record's preload library (private)
#   <libexecdir>/memprof/memprof_demo_victim      memprof demo's example program (private)
#   <python dir>/memprof/                         the Python module (below)
#
# memprof finds its two private files relative to bin/ (beside_exe.c), so an
# installed tree can be moved whole. The CMake package files are relative
# too; memprof.pc and the Python module's _location.py are written at
# install time, for the prefix actually installed to (--prefix, or the .deb's
# /usr), not the one configured.

install(TARGETS memprof RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS memprof_annotate EXPORT memprofTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/allocator_hooks/include/memprof/annotate.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/memprof)
install(TARGETS memprof_preload LIBRARY DESTINATION ${MEMPROF_INSTALL_PRELOADDIR})
# The example links libmemprof.so: found from its own directory.
file(RELATIVE_PATH mp_helper_to_lib /p/${MEMPROF_INSTALL_HELPERDIR} /p/${CMAKE_INSTALL_LIBDIR})
set_target_properties(memprof_demo_victim PROPERTIES INSTALL_RPATH "$ORIGIN/${mp_helper_to_lib}")
install(TARGETS memprof_demo_victim RUNTIME DESTINATION ${MEMPROF_INSTALL_HELPERDIR})

# find_package(memprof): relocatable (CMake computes the prefix from where
# the files are).
include(CMakePackageConfigHelpers)
set(mp_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/memprof)
file(RELATIVE_PATH MP_CONFIG_TO_PREFIX /p/${mp_cmake_dir} /p)
configure_file(${CMAKE_CURRENT_LIST_DIR}/memprofConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/memprofConfig.cmake @ONLY)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/memprofConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(EXPORT memprofTargets NAMESPACE memprof:: DESTINATION ${mp_cmake_dir})
install(FILES ${PROJECT_BINARY_DIR}/cmake/memprofConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/memprofConfigVersion.cmake DESTINATION ${mp_cmake_dir})

# The Python module goes where that prefix's python3 looks for modules:
# MEMPROF_INSTALL_PYTHONDIR when set; for the prefix /usr (the .deb),
# Debian's lib/python3/dist-packages, which every python3 version there
# reads; for any other prefix, the directory under it on the sys.path of
# the python3 found now (Debian's /usr/local: lib/python3.X/dist-packages),
# else lib/python3.X/site-packages (then PYTHONPATH must name it; the
# install says so).
set(MEMPROF_INSTALL_PYTHONDIR "" CACHE STRING
  "Where the Python module is installed, relative to the prefix (empty: decided at install time)")
find_package(Python3 COMPONENTS Interpreter QUIET)
set(mp_python "${Python3_EXECUTABLE}")

# Both files written at install time go through a scratch file named
# after the destination: two installs of this build may run at once (the
# tests install it, cpack packages it).
install(CODE "
  set(PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(PC_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(PC_VERSION \"${PROJECT_VERSION}\")
  string(MD5 mp_key \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
  set(mp_scratch \"${PROJECT_BINARY_DIR}/install-scratch/\${mp_key}\")
  configure_file(\"${CMAKE_CURRENT_LIST_DIR}/memprof.pc.in\" \"\${mp_scratch}/memprof.pc\" @ONLY)
  file(INSTALL \"\${mp_scratch}/memprof.pc\"
    DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\")

  set(mp_pydir \"${MEMPROF_INSTALL_PYTHONDIR}\")
  if(NOT mp_pydir AND CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(mp_pydir lib/python3/dist-packages)
  elseif(NOT mp_pydir AND NOT \"${mp_python}\" STREQUAL \"\")
    execute_process(COMMAND \"${mp_python}\" \"${CMAKE_CURRENT_LIST_DIR}/python_dir.py\" \"\${CMAKE_INSTALL_PREFIX}\"
      OUTPUT_VARIABLE mp_pyout OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE mp_pyrc)
    if(mp_pyrc EQUAL 0)
      list(GET mp_pyout 0 mp_pydir)
      list(GET mp_pyout 1 mp_pyseen)
      if(NOT mp_pyseen)
        message(STATUS \"memprof: the Python module goes to \${CMAKE_INSTALL_PREFIX}/\${mp_pydir}, which ${mp_python} does not read: set PYTHONPATH to it\")
      endif()
    endif()
  endif()
  if(NOT mp_pydir)
    set(mp_pydir lib/python3/dist-packages)
  endif()
  file(INSTALL \"${PROJECT_SOURCE_DIR}/python/memprof\" DESTINATION \"\${CMAKE_INSTALL_PREFIX}/\${mp_pydir}\"
    FILES_MATCHING PATTERN \"*.py\" PATTERN \"__pycache__\" EXCLUDE)
  file(RELATIVE_PATH mp_pylib \"/p/\${mp_pydir}/memprof\" \"/p/${CMAKE_INSTALL_LIBDIR}/libmemprof.so.${PROJECT_VERSION_MAJOR}\")
  file(WRITE \"\${mp_scratch}/_location.py\"
    \"# Written by cmake --install: libmemprof.so relative to this directory.\\nLIBRARY = \\\"\${mp_pylib}\\\"\\n\")
  file(INSTALL \"\${mp_scratch}/_location.py\" DESTINATION \"\${CMAKE_INSTALL_PREFIX}/\${mp_pydir}/memprof\")
")
