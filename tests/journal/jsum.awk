# list_journal -a text -> the jsum.txt layout of the golden corpus
function flush(   n, i, j, t, keys, line) {
	if (hdr == "") return
	n = 0
	for (k in cnt) keys[++n] = k
	for (i = 2; i <= n; i++) { t = keys[i]; for (j = i - 1; j >= 1 && keys[j] > t; j--) keys[j + 1] = keys[j]; keys[j + 1] = t }
	line = hdr
	for (i = 1; i <= n; i++) line = line (i > 1 ? ", " : " ") keys[i] ": " cnt[keys[i]]
	print line
	hdr = ""; split("", cnt)
}
BEGIN { split("extents inodes dirents xattrs alloc quotas", bn, " ") }
/^dev / {
	flush()
	for (i = 1; i <= NF; i++) { if ($i == "seq") s = $(i+1); if ($i == "last_seq") l = $(i+1); if ($i == "u64s") u = $(i+1) }
	hdr = $3 " " $4 " " $5 " " $6 " seq " s " last_seq " l " u64s " u ":"
	next
}
/^   entry type/ { et = $3; bt = $5; if (et != 0 && $9 != 0) cnt["entry type " et]++; next }
/^      u64s/ { if (et == 0) cnt[bn[bt + 1] " type " $4]++ }
END { flush() }
