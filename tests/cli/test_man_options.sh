# The man page documents every option of every command:
# each option that a command's --help lists (short and long, the
# sub-options of mount -o too) appears in that command's section of
# man/bcachefs.8 (".SS <command>" up to the next section), and the man page
# defines (a .TP entry) no option of a command that its --help does not
# list. A command of two words is written with a '+' ("device+add", its
# section is .SS "device add").
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }
man=$TESTDIR/../../man/bcachefs.8
[ -f "$man" ] || fail "no man page"

cmds="format show-super fsck list list_journal extract mount dump migrate migrate-superblock unlock set-passphrase remove-passphrase version
device+add device+remove device+online device+offline device+evacuate device+set-state device+resize
data+rereplicate data+migrate data+scrub fs+usage setattr quota+report quota+set"
for c in $cmds; do
	# shellcheck disable=SC2046 # the words of the command
	"$BCACHEFS" $(echo "$c" | tr + ' ') --help > "help.$c" || fail "$c --help"
done
python3 - "$man" $cmds <<'PY' || fail "the man page and --help differ"
import re, sys

man = open(sys.argv[1]).read()
# roff to text: \- is '-', fonts and escapes go
text = re.sub(r'\\f[BIRP]|\\&|\\e', '', man).replace('\\-', '-')
sections, cur = {}, None
for line in text.split('\n'):
    m = re.match(r'\.S[SH] (?:"([^"]+)"|(\S+))', line)
    if m:
        cur = (m.group(1) or m.group(2)) if line.startswith('.SS') else None
        if cur:
            sections[cur] = ''
        continue
    if cur:
        sections[cur] += line + '\n'

OPT = re.compile(r'(?<![\w-])(--[a-z0-9][a-z0-9_-]*|-[a-zA-Z])(?![\w-])')

def help_options(cmd):
    opts, sub = set(), set()
    for line in open('help.' + cmd):
        line = line.rstrip('\n')
        if re.match(r' {1,8}-', line):
            spec = re.split(r'(?<=\S)\s{2,}', line.strip() + '  ', maxsplit=1)[0]
            opts |= set(OPT.findall(spec))
        m = re.match(r' {32}([a-z_]+)(=[A-Z]+)?(\s|$)', line)
        if cmd == 'mount' and m and m.group(1) != 'others':
            sub.add(m.group(1))
    return opts, sub

bad = 0
for arg in sys.argv[2:]:
    cmd = arg.replace('+', ' ')
    if cmd not in sections:
        print('FAIL %s: no ".SS %s" section in the man page' % (cmd, cmd)); bad = 1; continue
    body = sections[cmd]
    opts, sub = help_options(arg)
    for o in sorted(opts):
        if not re.search(r'(?<![\w-])' + re.escape(o) + r'(?![\w-])', body):
            print('FAIL %s: option %s of --help is not in the man page' % (cmd, o)); bad = 1
    for o in sorted(sub):
        if not re.search(r'\b' + re.escape(o) + r'\b', body):
            print('FAIL %s: -o %s of --help is not in the man page' % (cmd, o)); bad = 1
    # the options the man page defines: the tag line after each .TP
    lines = body.split('\n')
    tags = set()
    for i, l in enumerate(lines[:-1]):
        if l.startswith('.TP'):
            tags |= set(OPT.findall(lines[i + 1]))
    for o in sorted(tags - opts):
        print('FAIL %s: the man page defines %s, which --help does not list' % (cmd, o)); bad = 1
    print('%-18s %s %s' % (cmd, ' '.join(sorted(opts)), ' '.join(sorted(sub))))
sys.exit(bad)
PY
