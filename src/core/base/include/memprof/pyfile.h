/* memprof/pyfile.h - whose code a Python file is, for attributing an
 * allocation to "the innermost frame of the user's code": the one rule of
 * PyTorch snapshots (docs/torch.md "Attribution") and of captures whose
 * stacks hold Python frames (docs/report.md "Allocations by function").
 * Pure string tests on the path; libc only.
 */
#ifndef MEMPROF_PYFILE_H
#define MEMPROF_PYFILE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	MP_PYFILE_USER = 0,     /* the user's code: none of the below, or named by user_code */
	MP_PYFILE_PACKAGE = 1,  /* a third-party package: under site-packages/ or dist-packages/ (not torch) */
	MP_PYFILE_INTERNAL = 2, /* the standard library (lib/python3.X/, lib64/python...), <frozen ...>,
				   <string>, torch's own files */
} mp_pyfile_kind_t;

/* What file is (mp_pyfile_kind_t). user_code: NULL, or --user-code's
 * comma-separated list of what counts as the user's code besides:
 * "packages" (every installed package but torch), a package's name
 * ("transformers": its directory or module under site-/dist-packages), a
 * path prefix (an item with a '/'); it counts before every other rule. */
int mp_pyfile_kind(const char *file, const char *user_code);

/* The path inside an installed-packages directory ("transformers/x.py" of
 * ".../site-packages/transformers/x.py"), from `from` on; NULL if none. */
const char *mp_pyfile_package_path(const char *from);

/* The comma-separated list (--user-code) names file. */
int mp_pyfile_user_code_names(const char *list, const char *file);

#ifdef __cplusplus
}
#endif
#endif
