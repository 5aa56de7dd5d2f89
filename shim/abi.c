/* shim/abi.c - which version of a libc function the calling object was linked against, for the
 * functions whose old version behaves differently. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#include "shim.h"

/*
 * The shim's symbols carry no version (shim/gen-map.py: an anonymous version
 * script), so the loader binds every version of a name a program asks for to
 * the one wrapper, and REAL() is libc's default version.  Where glibc keeps an
 * old version that behaves differently, a program linked before the change
 * (glibc's compat symbols, or .symver) got the new behaviour traced:
 * realpath@GLIBC_2.2.5 (before 2.3) took no NULL buffer (EINVAL), nftw@ and
 * nftw64@GLIBC_2.2.5 (before 2.3.3) ignored unknown flags and FTW_ACTIONRETVAL,
 * posix_spawn@ and posix_spawnp@GLIBC_2.2.5 (before 2.15) run a file without
 * #! by /bin/sh where the new ones fail with ENOEXEC, glob@ and
 * glob64@GLIBC_2.2.5 (before 2.27) call GLOB_ALTDIRFUNC's gl_stat where the
 * new ones call gl_lstat (which such a program never set).  A shim whose
 * symbols had versions would need every name at exactly libc's (and
 * liburing's) versions, or the loader takes it for no match; so the wrapper
 * asks instead which version the object it returns to binds the name at:
 * its undefined symbol's version (.gnu.version, .gnu.version_r); when the
 * object binds both (a program that compares them), the version of the
 * relocation of the GOT slot the call went through.  Not seen: a call made
 * by a tail call (the return address is the caller's caller's, whose
 * object's versions are asked), and a call through a function pointer in an
 * object that binds both (the default is given).  x86-64 glibc 2.35 and
 * later only (_dl_find_object; elsewhere the answer is always "the default").
 */

#if defined(__x86_64__) && __GLIBC_PREREQ(2, 35)
static const char *const old_names[ST_OLD_N] = {
    [ST_OLD_REALPATH] = "realpath",   [ST_OLD_NFTW] = "nftw",	  [ST_OLD_NFTW64] = "nftw64",
    [ST_OLD_GLOB] = "glob",	      [ST_OLD_GLOB64] = "glob64", [ST_OLD_SPAWN] = "posix_spawn",
    [ST_OLD_SPAWNP] = "posix_spawnp",
};

/* a dynamic entry's address: glibc relocates them in place in a writable
 * dynamic section, not in a read-only one; an unrelocated one is an offset
 * below the load address (the main program's, 0, needs none) */
static uintptr_t dyn_ptr(const struct link_map *m, ElfW(Addr) v)
{
	return v < m->l_addr ? v + m->l_addr : v;
}

/* what an object's dynamic section says of its symbols and relocations */
struct dynv {
	const ElfW(Sym) * sym;
	const char *str;
	const ElfW(Half) * versym;
	const ElfW(Verneed) * vn;
	size_t nvn, nsym;
	const ElfW(Rela) * jmprel, *rela;
	size_t njmprel, nrela;
};
static bool dyn_read(const struct link_map *m, struct dynv *v)
{
	const uint32_t *gnu_hash = NULL, *hash = NULL;
	*v = (struct dynv){0};
	for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			v->sym = (const ElfW(Sym) *)dyn_ptr(m, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			v->str = (const char *)dyn_ptr(m, d->d_un.d_ptr);
			break;
		case DT_VERSYM:
			v->versym = (const ElfW(Half) *)dyn_ptr(m, d->d_un.d_ptr);
			break;
		case DT_VERNEED:
			v->vn = (const ElfW(Verneed) *)dyn_ptr(m, d->d_un.d_ptr);
			break;
		case DT_VERNEEDNUM:
			v->nvn = d->d_un.d_val;
			break;
		case DT_GNU_HASH:
			gnu_hash = (const uint32_t *)dyn_ptr(m, d->d_un.d_ptr);
			break;
		case DT_HASH:
			hash = (const uint32_t *)dyn_ptr(m, d->d_un.d_ptr);
			break;
		case DT_JMPREL:
			v->jmprel = (const ElfW(Rela) *)dyn_ptr(m, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			v->njmprel = d->d_un.d_val / sizeof(ElfW(Rela));
			break;
		case DT_RELA:
			v->rela = (const ElfW(Rela) *)dyn_ptr(m, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			v->nrela = d->d_un.d_val / sizeof(ElfW(Rela));
			break;
		}
	}
	if (!v->sym || !v->str || !v->versym || !v->vn || (!gnu_hash && !hash))
		return false;
	/* the undefined symbols come before the first hashed one (GNU hash's
	 * symoffset); a SysV hash counts them all (nchain) */
	v->nsym = gnu_hash ? gnu_hash[1] : hash[1];
	return true;
}

/* symbol i's reference: 1 at GLIBC_2.2.5, 0 at another version (or none) */
static int sym_old(const struct dynv *v, size_t i)
{
	ElfW(Half) ndx = v->versym[i] & 0x7fff;
	if (ndx < 2) /* unversioned: the default */
		return 0;
	const ElfW(Verneed) *vn = v->vn;
	for (size_t k = 0; k < v->nvn; k++) {
		const ElfW(Vernaux) *a = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);
		for (unsigned j = 0; j < vn->vn_cnt; j++) {
			if (a->vna_other == ndx)
				return !strcmp(v->str + a->vna_name, "GLIBC_2.2.5");
			a = (const ElfW(Vernaux) *)((const char *)a + a->vna_next);
		}
		vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next);
	}
	return 0;
}

/* whether [a, a + n) lies in an executable segment of the object, read
 * from its program headers (in the first page of its first segment, where
 * its mapping starts): bytes that only look like a call must not send the
 * decoder into a hole of the mapping */
static bool in_text(const struct dl_find_object *fo, const struct link_map *m, uintptr_t a,
		    size_t n)
{
	const ElfW(Ehdr) *eh = fo->dlfo_map_start;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(ElfW(Phdr)) > 4096)
		return false;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		uintptr_t s = m->l_addr + ph[i].p_vaddr;
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && a >= s &&
		    a + n <= s + ph[i].p_filesz)
			return true;
	}
	return false;
}

/*
 * The GOT slot a direct call that returns to ret went through, 0 when the
 * call is not one of the forms the x86-64 linkers emit: `call *slot(%rip)`
 * (-fno-plt), or `call PLT` whose entry jumps through its slot (the lazy
 * PLT's `jmp *slot(%rip)`, .plt.got's, and .plt.sec's after an endbr64,
 * with or without the bnd prefix).  Only bytes inside the object's
 * executable segments are read.
 */
static uintptr_t call_slot(uintptr_t ret, const struct dl_find_object *fo, const struct link_map *m)
{
	int32_t d;
	if (in_text(fo, m, ret - 6, 6)) {
		const unsigned char *c = (const unsigned char *)ret - 6;
		if (c[0] == 0xff && c[1] == 0x15) {
			memcpy(&d, c + 2, 4);
			return ret + (intptr_t)d;
		}
	}
	if (!in_text(fo, m, ret - 5, 5) || *(const unsigned char *)(ret - 5) != 0xe8)
		return 0;
	memcpy(&d, (const unsigned char *)ret - 4, 4);
	uintptr_t t = ret + (intptr_t)d;
	if (!in_text(fo, m, t, 16))
		return 0;
	const unsigned char *e = (const unsigned char *)t;
	size_t at = 0;
	if (e[0] == 0xf3 && e[1] == 0x0f && e[2] == 0x1e && e[3] == 0xfa) /* endbr64 */
		at = 4;
	if (e[at] == 0xf2) /* bnd */
		at++;
	if (e[at] != 0xff || e[at + 1] != 0x25)
		return 0;
	memcpy(&d, e + at + 2, 4);
	return t + at + 6 + (intptr_t)d;
}

/* the relocation of the slot, when it binds name: 1 at GLIBC_2.2.5, 0 at
 * another version, -1 not found */
static int slot_old(const struct link_map *m, const struct dynv *v, uintptr_t slot,
		    const char *name)
{
	const ElfW(Rela) * tab[2] = {v->jmprel, v->rela};
	size_t n[2] = {v->jmprel ? v->njmprel : 0, v->rela ? v->nrela : 0};
	for (int t = 0; t < 2; t++)
		for (size_t i = 0; i < n[t]; i++) {
			const ElfW(Rela) *r = &tab[t][i];
			unsigned type = ELF64_R_TYPE(r->r_info);
			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
			    m->l_addr + r->r_offset != slot)
				continue;
			size_t s = ELF64_R_SYM(r->r_info);
			if (!s || strcmp(v->str + v->sym[s].st_name, name))
				return -1;
			return sym_old(v, s);
		}
	return -1;
}

/* the last object asked about, per thread: its map and dynamic section (a
 * map freed by dlclose and made again for another object is told apart by
 * the second), the names looked up, those it binds old, those it binds at
 * another version too */
static __thread struct {
	const void *map, *ld;
	uint16_t known, old, other;
} memo;

bool st__old_abi(const void *ret, enum st_old which)
{
	struct dl_find_object fo;
	if (_dl_find_object((void *)ret, &fo) != 0 || !fo.dlfo_link_map)
		return false;
	const struct link_map *m = fo.dlfo_link_map;
	if (memo.map != m || memo.ld != m->l_ld) {
		memo.map = m;
		memo.ld = m->l_ld;
		memo.known = memo.old = memo.other = 0;
	}
	uint16_t bit = (uint16_t)(1u << which);
	const char *name = old_names[which];
	struct dynv v;
	bool have = false;
	if (!(memo.known & bit)) {
		if ((have = dyn_read(m, &v)))
			for (size_t i = 1; i < v.nsym; i++) {
				if (v.sym[i].st_shndx != SHN_UNDEF ||
				    strcmp(v.str + v.sym[i].st_name, name))
					continue;
				if (sym_old(&v, i))
					memo.old |= bit;
				else
					memo.other |= bit;
			}
		memo.known |= bit;
	}
	if (!(memo.old & bit))
		return false;
	if (!(memo.other & bit))
		return true;
	/* the object binds both (a program comparing them): the call site's
	 * slot tells which; an indirect call, the default */
	if (!have && !dyn_read(m, &v))
		return false;
	uintptr_t slot = call_slot((uintptr_t)ret, &fo, m);
	return slot && slot_old(m, &v, slot, name) == 1;
}

void *st__resolve_old(_Atomic(void *) *slot, const char *name)
{
	void *p = atomic_load_explicit(slot, memory_order_acquire);
	if (p)
		return p;
	int saved = errno;
	p = dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	if (!p)
		p = (void *)st__enosys_stub;
	errno = saved;
	/* release: a reader that sees the pointer may call through it */
	atomic_store_explicit(slot, p, memory_order_release);
	return p;
}
#else
bool st__old_abi(const void *ret, enum st_old which)
{
	(void)ret;
	(void)which;
	return false;
}
void *st__resolve_old(_Atomic(void *) *slot, const char *name)
{
	return st__resolve(slot, name);
}
#endif
