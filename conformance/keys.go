package conformance

import (
	"fmt"
	"strings"

	"github.com/mcpward/mcpward/ports"
)

// DistinctKeys returns the keys the TokenStore and Locker suites require a
// store to keep apart: path separators and traversal, NUL, non-UTF-8 and
// non-ASCII bytes, keys differing only in case or in Unicode normalization,
// keys that collide under naive encodings (escaping, truncation, cleaning
// paths, cutting at NUL, replacing invalid UTF-8, folding case), and keys of
// exactly ports.MaxKeyLen bytes. Every key is valid. A host may use it in its
// own tests of a store's encoding.
func DistinctKeys() []string {
	long := strings.Repeat("k", ports.MaxKeyLen)
	keys := []string{
		"a", "A", "b", "B", "ab", "aB", "Ab", "AB",
		"a/b", "a_b", "a-b", "a%2Fb", "a%2fb", "a%252Fb", "a\\b", "a:b", "a b", "a+b", "a.b",
		"a/", "/a", "a//b", "//", "/", ".", "..", "...", "./a",
		"../a", "a/../b", "a/../../b", "../b", "../../b", "/etc/passwd", "a/./b",
		"~", "~/a", "$HOME", "%s", "%00", "*", "?", "[a]", "'", "\"", "`", "\n", "a\n", "a\r\n", "\t",
		"x\x00y", "x", "x\x00", "\x00", "\x00\x00", "x\x00z",
		"\xff", "\xfe\xff", "\xc3", "\xc3\x28", "\ufffd", "\xff\xfe", "a\xffb", "a\ufffdb",
		"\u00e9", "e\u0301", "\u00c9", "\u65e5\u672c", "\U0001F600", "\u212a", "K", "k",
		"CON", "con", "NUL", "nul", "a.", "a..", " a", "a ",
		"YQ==", "YQ", "61", "0x61", "ab==",
		long,
		long[:ports.MaxKeyLen-1] + "j",
		long[:ports.MaxKeyLen-1],
		long[:255], long[:256], long[:255] + "j",
		strings.Repeat("/", ports.MaxKeyLen),
		strings.Repeat("..", ports.MaxKeyLen/2),
		strings.Repeat("\xff", ports.MaxKeyLen),
		strings.Repeat("\x00", ports.MaxKeyLen),
	}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] || k == "" || len(k) > ports.MaxKeyLen {
			panic(fmt.Sprintf("conformance: bad distinct key %q", k))
		}
		seen[k] = true
	}
	return keys
}

// quoteKey shows a key in a failure message, cut if long.
func quoteKey(k string) string {
	if len(k) > 40 {
		return fmt.Sprintf("%q…(%d bytes)", k[:40], len(k))
	}
	return fmt.Sprintf("%q", k)
}
