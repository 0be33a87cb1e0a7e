#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
"""Cross-check user/ibverbs_private.h against rdma-core's own headers.

    xcheck-rdma-core.py <rdma-core git dir> <tag>...

For each tag, export libibverbs/, ccan/, util/, kernel-headers/ and
buildlib/ of that rdma-core release into a scratch directory, take our
header as preprocessed for that release's private ABI (the
IBVERBS_PABI_VERSION of its CMakeLists.txt), generate
kernel-abi/ib_user_verbs.h the way rdma-core's build does, and compile one
C file that includes rdma-core's <infiniband/driver.h> together with copies
of our declarations under other struct tags. The compiler then proves, for
every member of our verbs_context_ops, verbs_device_ops, verbs_device and
verbs_match_ent, that rdma-core has a member of the same name at the same
offset (and, where the types can be compared, of the same type), that the
sizes agree, that our cmd structs have rdma-core's size, and that each of
our prototypes is a compatible redeclaration of rdma-core's.

Not part of `make check` (it needs an rdma-core checkout); run it when the
private ABI header changes:  make -C tests/provider xcheck RDMA_CORE=<dir>
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, '..', '..', 'user', 'ibverbs_private.h')

# Structs compared member by member; True: member types are comparable.
STRUCTS = {
    'verbs_context_ops': True,
    'verbs_device_ops': True,
    'verbs_device': False,	# our list node has its own tag
    'verbs_match_ent': False,	# anonymous union member
    'verbs_cq': True,
    'verbs_qp': True,
    'verbs_mr': True,
    'verbs_xrcd': True,
    'verbs_srq': True,
}
CMDS = ['ibv_get_context', 'ibv_query_port', 'ibv_alloc_pd', 'ibv_create_cq',
        'ibv_resize_cq', 'ibv_create_qp', 'ibv_modify_qp', 'ibv_query_qp',
        'ibv_post_send', 'ibv_reg_mr', 'ibv_rereg_mr', 'ibv_alloc_mw',
        'ibv_create_srq', 'ibv_modify_srq', 'ibv_query_srq',
        'ibv_open_xrcd', 'ibv_create_xsrq', 'ibv_open_qp']


def strip_comments(text):
    return re.sub(r'/\*.*?\*/', '', text, flags=re.S)


def struct_body(text, name):
    m = re.search(r'^struct %s \{\n(.*?)^\};' % name, text, re.S | re.M)
    if not m:
        sys.exit('struct %s not found in %s' % (name, HEADER))
    return m.group(1)


def member_names(body):
    names, depth, cur = [], 0, ''
    for ch in body:
        depth += ch in '({'
        depth -= ch in ')}'
        if ch == ';' and depth == 0:
            decl = cur.strip()
            cur = ''
            fp = re.search(r'\(\s*\*\s*(\w+)\s*\)', decl)
            if fp:
                names.append(fp.group(1))
            elif decl.endswith('}'):
                # anonymous struct or union: its members are ours
                names.extend(member_names(decl[decl.index('{') + 1:-1]))
            else:
                names.append(re.search(r'(\w+)\s*(\[[^\]]*\])?\s*$',
                                       decl).group(1))
        else:
            cur += ch
    return names


def prototypes(text):
    return re.findall(r'^(?:void|int)[ *][^;{]*?\([^;{]*?\);', text,
                      re.S | re.M)


def pabi_of(git_dir, tag):
    cm = subprocess.run(['git', '-C', git_dir, 'show', tag + ':CMakeLists.txt'],
                        check=True, stdout=subprocess.PIPE, text=True).stdout
    return re.search(r'IBVERBS_PABI_VERSION\s+"?(\d+)', cm).group(1)


def header_for(pabi):
    """Our header with its #if blocks decided for @pabi, includes left out."""
    text = ''.join(l for l in open(HEADER) if not l.startswith('#include'))
    res = subprocess.run(['gcc', '-E', '-P', '-undef', '-nostdinc',
                          '-DIBVERBS_PABI_VERSION=' + pabi, '-'],
                         input=text, check=True, stdout=subprocess.PIPE,
                         text=True)
    return strip_comments(res.stdout)


# Members of ours that rdma-core does not have: padding to its sizes.
OURS_ONLY = {'qp_ex_size'}


def make_test(text):
    out = ['#include <stddef.h>',
           '#include <infiniband/driver.h>',
           '#define SAME_OFF(a, b, m) static_assert(offsetof(struct a, m) '
           '== offsetof(struct b, m), #b "." #m " offset");',
           '#define SAME_TYPE(a, b, m) static_assert('
           '__builtin_types_compatible_p(__typeof__(((struct a *)0)->m), '
           '__typeof__(((struct b *)0)->m)), #b "." #m " type");',
           'struct verbs_list_node {%s};'
           % struct_body(text, 'verbs_list_node')]
    for name, typed in STRUCTS.items():
        body = struct_body(text, name)
        out.append('struct x_%s {\n%s};' % (name, body))
        out.append('static_assert(sizeof(struct x_%s) == sizeof(struct %s), '
                   '"%s size");' % (name, name, name))
        for m in member_names(body):
            if m in OURS_ONLY:
                continue
            out.append('SAME_OFF(x_%s, %s, %s)' % (name, name, m))
            if typed:
                out.append('SAME_TYPE(x_%s, %s, %s)' % (name, name, m))
    for name in CMDS:
        body = struct_body(text, name)
        out.append('struct x_%s {\n%s};' % (name, body))
        out.append('static_assert(sizeof(struct x_%s) == sizeof(struct %s), '
                   '"%s size");' % (name, name, name))
        out.append('SAME_OFF(x_%s, %s, hdr)' % (name, name))
        out.append('SAME_OFF(x_%s, %s, core_payload)' % (name, name))
    out.extend(prototypes(text))
    out.append('int main(void) { return 0; }')
    return '\n'.join(out) + '\n'


def export(git_dir, tag, dest):
    tar = subprocess.run(['git', '-C', git_dir, 'archive', tag, 'libibverbs',
                          'ccan', 'util', 'kernel-headers', 'buildlib'],
                         check=True, stdout=subprocess.PIPE).stdout
    subprocess.run(['tar', '-x', '-C', dest], input=tar, check=True)
    inc = os.path.join(dest, 'include')
    os.makedirs(os.path.join(inc, 'infiniband'))
    os.makedirs(os.path.join(inc, 'kernel-abi'))
    for h in os.listdir(os.path.join(dest, 'libibverbs')):
        if h.endswith('.h'):
            os.link(os.path.join(dest, 'libibverbs', h),
                    os.path.join(inc, 'infiniband', h))
    os.symlink(os.path.join(dest, 'kernel-headers', 'rdma'),
               os.path.join(inc, 'rdma'))
    # From v64 verbs.h includes it from infiniband/, as an install does.
    ioctl_verbs = os.path.join(dest, 'kernel-headers', 'rdma',
                               'ib_user_ioctl_verbs.h')
    if os.path.exists(ioctl_verbs):
        os.link(ioctl_verbs, os.path.join(inc, 'infiniband',
                                          'ib_user_ioctl_verbs.h'))
    subprocess.run([sys.executable,
                    os.path.join(dest, 'buildlib', 'make_abi_structs.py'),
                    os.path.join(dest, 'kernel-headers', 'rdma',
                                 'ib_user_verbs.h'),
                    os.path.join(inc, 'kernel-abi', 'ib_user_verbs.h')],
                   check=True)
    open(os.path.join(inc, 'config.h'), 'w').close()
    return inc


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    failed = 0
    for n, tag in enumerate(sys.argv[2:], 1):
        pabi = pabi_of(sys.argv[1], tag)
        test = make_test(header_for(pabi))
        with tempfile.TemporaryDirectory(prefix='vroce-xcheck.') as tmp:
            inc = export(sys.argv[1], tag, tmp)
            src = os.path.join(tmp, 'xcheck.c')
            open(src, 'w').write(test)
            res = subprocess.run(['gcc', '-std=gnu11', '-Wall', '-Werror',
                                  '-I', inc, '-I', tmp, '-o',
                                  os.path.join(tmp, 'xcheck'), src],
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
            ok = res.returncode == 0
            failed += not ok
            print('%sok %d - ibverbs_private.h of ABI %s matches rdma-core %s'
                  % ('' if ok else 'not ', n, pabi, tag))
            if not ok:
                lines = res.stdout.splitlines()
                errors = [l for l in lines if 'error:' in l] or lines
                for line in errors[:20]:
                    print('# ' + line)
    print('1..%d' % (len(sys.argv) - 2))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
