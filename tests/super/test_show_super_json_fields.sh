# Every field of show-super's text form is in its --json form,
# with the same value: each "Label: value" line of
# `show-super -l -f all` (top, layout, members, crypt, journal, replicas)
# is looked up in a table of JSON keys; a label missing from the table
# fails too (a new text field needs its JSON key). The disk groups, which
# the text shows only as each member's group, are in the JSON with their
# labels, parents and paths. Images: a 2-device filesystem with nested
# disk groups and a label, and an encrypted one (the crypt field).
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }

truncate -s 64M g1.img g2.img
"$BCACHEFS" format -q -L mylabel --group=ssd.fast g1.img --group=hdd g2.img \
	--foreground_target=ssd --background_target=hdd > out 2>&1 || { cat out; fail "format"; }
enc=$(golden_images c1_encrypted)

for img in g1.img g2.img "$enc"; do
	"$BCACHEFS" show-super -l -f all "$img" > text || fail "show-super $img"
	"$BCACHEFS" show-super -l -f all --json "$img" > json || fail "show-super --json $img"
	python3 - text json <<'PY' || fail "$img: text and JSON differ"
import json, re, sys

text = open(sys.argv[1]).read().split('\n')
d = json.load(open(sys.argv[2]))
fields = {f['type']: f for f in d['fields']}

def human(s):		# "64.0K" -> bytes
    m = re.fullmatch(r'([0-9.]+)([KMGTPE]?)', s)
    assert m, s
    return float(m.group(1)) * 1024 ** ' KMGTPE'.index(m.group(2) or ' ')

def near(a, b):		# human-rounded sizes
    return abs(a - b) <= max(a, b) * 0.05

def first(s):
    return s.split(' ')[0]

def flags(s):
    return [] if s == '(none)' else s.split(',')

top = {
    'External UUID': lambda v: v == d['external_uuid'],
    'Internal UUID': lambda v: v == d['internal_uuid'],
    'Label': lambda v: v == d['label'],
    'Version': lambda v: int(v) == d['version'],
    'Block_size': lambda v: near(human(v), d['block_size']),
    'Btree node size': lambda v: near(human(v), d['btree_node_size']),
    'Error action': lambda v: v == d['error_action'],
    'Clean': lambda v: bool(int(v)) == d['clean'],
    'Metadata replicas': lambda v: int(v) == d['metadata_replicas'],
    'Data replicas': lambda v: int(v) == d['data_replicas'],
    'Metadata checksum type': lambda v: first(v) == d['metadata_checksum_type'],
    'Data checksum type': lambda v: first(v) == d['data_checksum_type'],
    'Compression type': lambda v: first(v) == d['compression_type'],
    'Foreground write target': lambda v: int(v) == d['foreground_target'],
    'Background write target': lambda v: int(v) == d['background_target'],
    'Promote target': lambda v: int(v) == d['promote_target'],
    'String hash type': lambda v: first(v) == d['str_hash_type'],
    '32 bit inodes': lambda v: bool(int(v)) == d['inodes_32bit'],
    'GC reserve percentage': lambda v: int(v.rstrip('%')) == d['gc_reserve_percent'],
    'Root reserve percentage': lambda v: int(v.rstrip('%')) == d['root_reserve_percent'],
    'Devices': lambda v: v == '%d live, %d total' % (d['devices_live'], d['devices_total']),
    'Sections': lambda v: (flags(v) if v else []) == d['sections'],
    'Superblock size': lambda v: int(v) == d['superblock_size'],
}
layout = {
    'type': lambda v: int(v) == d['layout']['type'],
    'superblock max size': lambda v: near(human(v), 512 << d['layout']['sb_max_size_bits']),
    'nr superblocks': lambda v: int(v) == d['layout']['nr_superblocks'],
    'Offsets': lambda v: [int(x) for x in v.split(', ')] == d['layout']['offsets'],
}
def member(m):
    return {
        'UUID': lambda v: v == m['uuid'],
        'Size': lambda v: near(human(v), m['size']),
        'Bucket size': lambda v: near(human(v), m['bucket_size'] * 512),
        'First bucket': lambda v: int(v) == m['first_bucket'],
        'Buckets': lambda v: int(v) == m['nbuckets'],
        'Last mount': lambda v: m['last_mount'] > 0 if v != '(never)' else m['last_mount'] == 0,
        'State': lambda v: v == m['state'],
        'Group': lambda v: v == m.get('group_label', ''),
        'Data allowed': lambda v: flags(v) == m['data_allowed'],
        'Has data': lambda v: flags(v) == m['has_data'],
        'Replacement policy': lambda v: v == m['replacement'],
        'Discard': lambda v: bool(int(v)) == m['discard'],
    }
crypt = lambda c: {
    'KFD': lambda v: int(v) == c['kdf_type'],
    'scrypt n': lambda v: int(v) == c['scrypt_n'],
    'scrypt r': lambda v: int(v) == c['scrypt_r'],
    'scrypt p': lambda v: int(v) == c['scrypt_p'],
}

table, section, checked = top, 'top', 0
replicas = []
for line in text:
    if not line.strip():
        continue
    m = re.fullmatch(r'([A-Z][a-z_]*)( \(size (\d+)\))?:', line)
    if m:
        section = m.group(1).lower()
        if section != 'layout':
            assert section in fields, 'text section %s not in the JSON' % section
            assert int(m.group(3)) == fields[section]['size'], section
        table = {'layout': layout, 'crypt': crypt(fields.get('crypt', {})),
                 'journal': {'Buckets': lambda v: [int(x) for x in v.split()] == fields['journal']['buckets']},
                 }.get(section, {})
        continue
    m = re.fullmatch(r'  Device (\d+):', line)
    if m:
        devs = [x for x in fields['members']['devices'] if x['index'] == int(m.group(1))]
        assert devs, 'member %s not in the JSON' % m.group(1)
        table = member(devs[0])
        continue
    if section == 'replicas':
        m = re.fullmatch(r'  (\w+): +\[([0-9 ]*)\]', line)
        assert m, line
        replicas.append((m.group(1), [int(x) for x in m.group(2).split()]))
        continue
    m = re.fullmatch(r'\s*([^:\t]+):\t+(.*)', line)
    assert m, 'unparsed text line: %r' % line
    label, value = m.group(1).strip(), m.group(2)
    assert label in table, '%s: text field %r has no JSON key in this test' % (section, label)
    assert table[label](value), '%s: %r = %r differs in the JSON' % (section, label, value)
    checked += 1
assert replicas == [(e['data_type'], e['devs']) for e in fields['replicas']['entries']], replicas

# disk groups: labels, parents and paths; every member's group is one of them
if 'disk_groups' in fields:
    groups = fields['disk_groups']['groups']
    for g in groups:
        assert 'label' in g and 'path' in g, g
        if 'parent' in g:
            assert g['path'] == groups[g['parent']]['path'] + '.' + g['label'], g
    for m in fields['members']['devices']:
        if m['group']:
            g = groups[m['group'] - 1]
            assert m['group_label'] == g['label'] and m['group_path'] == g['path'], (m, g)
    print('disk groups:', ', '.join(g['path'] for g in groups))
print('%d text fields checked' % checked)
PY
	echo "ok   $(basename "$img"): every text field in the JSON"
done
"$BCACHEFS" show-super -f all --json g1.img | grep -q '"path": "ssd.fast"' || fail "no group path ssd.fast"
