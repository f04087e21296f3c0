/* calltree_plugin.c - a module with a function no symbol table names once
 * stripped (hidden, so not in .dynsym either): test_calltree.c dlopens the
 * stripped copy (libcalltree_stripped.so) and records a stack through it,
 * whose frame the call tree must show as object+offset. */
#include <stdint.h>

__attribute__((visibility("hidden"), noinline, used)) void calltree_hidden(void);
__attribute__((visibility("default"))) uintptr_t calltree_hidden_address(void);

__attribute__((visibility("hidden"), noinline, used)) void calltree_hidden(void)
{
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory");
}

__attribute__((visibility("default"))) uintptr_t calltree_hidden_address(void)
{
	return (uintptr_t)calltree_hidden;
}
