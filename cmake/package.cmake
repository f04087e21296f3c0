# package.cmake - the Debian package (CPack DEB; docs/install.md).
# scripts/package-deb.sh builds it: `cpack -G DEB` over a build configured
# with the prefix /usr (the script configures one when not given a build
# directory). It holds what `cmake --install` installs, under /usr.
#
# Depends: computed by dpkg-shlibdeps from the ELF files' own needs (libc6,
# zlib1g, libcairo2, libjansson4, libprotobuf-c1, libfontconfig1, and
# libunwind8 / libdw1 when the build found them), so it is what this build
# links, never a list kept by hand. Recommends: the font the charts are
# drawn with (another stands in without it) and python3 for the module.
# (CPack warns that the preload has no soname: it is a private module, not
# a library to link, so it rightly stays out of the shlibs file.)
set(CPACK_PACKAGE_NAME memprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "memory profiler for ML workloads, and XLA HLO buffer viewer")
# The extended description (CPack puts the summary above it and indents it).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "memprof records a program's host allocations (memprof record -- CMD) and
what frameworks report through its annotation API (libmemprof.so,
<memprof/annotate.h>, pkg-config memprof, find_package(memprof)), then
reports the peak, what was live at it, fragmentation and failed
allocations (memprof report), draws charts, and reads TF/JAX profiles and
XLA HLO modules (memprof hlo). Includes the memprof Python module.")
set(MEMPROF_DEB_MAINTAINER "memprof developers" CACHE STRING "The .deb's Maintainer field")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${MEMPROF_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # memprof_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# a shlibs file, so that packages built against libmemprof.so.0 depend on
# this one: any later 0.x (the soname changes with the ABI)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# Maintainer scripts: ldconfig (which CPack would add alone), and the
# Python module byte-compiled on install and its compiled files removed
# before removal (cmake/deb/).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/deb/postinst
  ${CMAKE_CURRENT_LIST_DIR}/deb/prerm ${CMAKE_CURRENT_LIST_DIR}/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fonts-dejavu-core, python3")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
include(CPack)
