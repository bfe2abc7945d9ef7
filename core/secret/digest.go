package secret

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
)

// DigestLen is the number of hex digits of a display digest (Digest):
// 8, 32 bits. Four digits (16 bits) are too few: "literal-one" and
// "literal-two" share their first four.
const DigestLen = 8

// Digest returns a short digest of s for display: the first DigestLen
// lowercase hex digits of the SHA-256 of s. It lets a person tell two
// masked texts apart without seeing them. It is not a fingerprint (32
// bits: a writer who tries about 2^32 texts can find two that share it)
// and decides nothing: the fingerprint, which hashes every literal in
// full, is what binds an approval. It reveals no more of s than the
// fingerprint already does.
func Digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:DigestLen/2])
}

// RedactedDigest returns the display marker "<redacted:DIGEST>" of a
// masked literal s (DIGEST is Digest(s)): the approval review's form of
// Redacted, which tells two different masked literals apart.
func RedactedDigest(s string) string { return "<redacted:" + Digest(s) + ">" }

// RedactedDefault returns the display marker "<redacted:NAME default:DIGEST>"
// of a template ${NAME:-def} whose default def is itself a credential
// (DIGEST is Digest(def)). NAME is sanitized as RedactedVar sanitizes it.
func RedactedDefault(name, def string) string {
	v := RedactedVar(name)
	return v[:len(v)-1] + " default:" + Digest(def) + ">"
}

// digestMarkerRE matches the markers RedactedDigest and RedactedDefault
// produce.
var digestMarkerRE = regexp.MustCompile(`^<redacted:(?:[0-9a-f]{8}|[A-Za-z0-9_.-]* default:[0-9a-f]{8})>$`)

// LiteralSpans returns the [start, end) spans of s that one pass of
// MaskLiterals masks (by shape and by position), sorted, merged where they
// overlap or touch, and never empty. Each span is exactly a credential's
// extent: the text around it is not part of it.
func LiteralSpans(s string) [][2]int {
	var spans [][2]int
	found := litScan(s)
	for i := range maskRules {
		if r := &maskRules[i]; r.runs(s, found, i) {
			spans = r.spans(s, spans)
		}
	}
	return mergeSpans(spans)
}

// mergeSpans sorts spans and merges those that overlap or touch.
func mergeSpans(spans [][2]int) [][2]int {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	out := spans[:1]
	for _, sp := range spans[1:] {
		if last := &out[len(out)-1]; sp[0] <= last[1] {
			last[1] = max(last[1], sp[1])
			continue
		}
		out = append(out, sp)
	}
	return out
}

// MaskDigests returns s with every span of LiteralSpans(s) replaced by
// RedactedDigest of the text it covers, and the number of spans replaced:
// the approval review's form of MaskLiterals, which shows everything but
// the exact extent of each credential and tells different credentials
// apart.
func MaskDigests(s string) (string, int) {
	spans := LiteralSpans(s)
	if len(spans) == 0 {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		b.WriteString(RedactedDigest(s[sp[0]:sp[1]]))
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String(), len(spans)
}

// TokenRuns returns the [start, end) spans of the maximal runs of s made
// of credential characters (anything but white space, quotes and the
// characters that make text code: $ ( ) ; & | < > ` { } [ ] \ and ","),
// in order. A value that is secret as a whole (under a credential-shaped
// key, after a credential-shaped flag) is shown in the approval review
// with these runs masked, so its structure, and any code in it, stays
// visible.
func TokenRuns(s string) [][2]int {
	var out [][2]int
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isTokenByte(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	return out
}

// isTokenByte reports whether c belongs to tokenChar's class.
func isTokenByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\f', '\r', '"', '\'', '`', ';', '&', '|', '<', '>', '(', ')', '{', '}', '[', ']', '$', '\\', ',':
		return false
	}
	return true
}
