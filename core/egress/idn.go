package egress

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file shows internationalized host names (IDN) both ways, so a
// look-alike host (аpple.com with a Cyrillic а) can be told from the one it
// imitates wherever mcpward prints a host. It implements Punycode (RFC
// 3492) itself: core may import only the standard library.
//
// These helpers are for DISPLAY. The ASCII form they compute is the one
// IDNA gives a name that is already lower-case and in NFC, which is what
// a name written in a configuration file almost always is; it is not a
// full UTS #46 mapping and decides nothing about what is dialled (the
// egress policy and the dial-time address check do).

// Punycode parameters (RFC 3492 §5).
const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
	// pcMaxLabel bounds the labels encoded or decoded (a DNS label is at
	// most 63 bytes; a longer one cannot be a host anyway), which also
	// keeps the arithmetic far from overflow.
	pcMaxLabel = 256
)

// acePrefix opens an encoded (A-) label.
const acePrefix = "xn--"

func pcAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}

func pcDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

// punyEncode encodes a label of Unicode code points (RFC 3492 §6.3),
// without the ACE prefix. ok is false for invalid UTF-8 or a label longer
// than pcMaxLabel runes.
func punyEncode(label string) (string, bool) {
	if !utf8.ValidString(label) {
		return "", false
	}
	runes := []rune(label)
	if len(runes) > pcMaxLabel {
		return "", false
	}
	var out []byte
	for _, r := range runes {
		if r < 0x80 {
			out = append(out, byte(r))
		}
	}
	b := len(out)
	h := b
	if b > 0 {
		out = append(out, '-')
	}
	n, delta, bias := pcInitialN, 0, pcInitialBias
	for h < len(runes) {
		m := int(unicode.MaxRune) + 1
		for _, r := range runes {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range runes {
			if int(r) < n {
				delta++
			}
			if int(r) != n {
				continue
			}
			q := delta
			for k := pcBase; ; k += pcBase {
				t := k - bias
				switch {
				case t < pcTMin:
					t = pcTMin
				case t > pcTMax:
					t = pcTMax
				}
				if q < t {
					break
				}
				out = append(out, pcDigit(t+(q-t)%(pcBase-t)))
				q = (q - t) / (pcBase - t)
			}
			out = append(out, pcDigit(q))
			bias = pcAdapt(delta, h+1, h == b)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return string(out), true
}

// punyDecode decodes an encoded label without its ACE prefix (RFC 3492
// §6.2). ok is false for anything that is not valid Punycode of at most
// pcMaxLabel code points, or that decodes to a surrogate, to a code point
// beyond unicode.MaxRune, or to a label with no non-ASCII code point.
func punyDecode(s string) (string, bool) {
	if len(s) > 4*pcMaxLabel {
		return "", false
	}
	var out []rune
	i := 0
	if d := strings.LastIndexByte(s, '-'); d >= 0 {
		for j := 0; j < d; j++ {
			if s[j] >= 0x80 {
				return "", false
			}
			out = append(out, rune(s[j]))
		}
		i = d + 1
	}
	n, bias, pos := pcInitialN, pcInitialBias, 0
	for i < len(s) {
		oldPos, w := pos, 1
		for k := pcBase; ; k += pcBase {
			if i >= len(s) {
				return "", false
			}
			c := s[i]
			i++
			var digit int
			switch {
			case 'a' <= c && c <= 'z':
				digit = int(c - 'a')
			case 'A' <= c && c <= 'Z':
				digit = int(c - 'A')
			case '0' <= c && c <= '9':
				digit = int(c-'0') + 26
			default:
				return "", false
			}
			if digit > (1<<30)/w || pos > (1<<30)-digit*w {
				return "", false
			}
			pos += digit * w
			t := k - bias
			switch {
			case t < pcTMin:
				t = pcTMin
			case t > pcTMax:
				t = pcTMax
			}
			if digit < t {
				break
			}
			if w > (1<<30)/(pcBase-t) {
				return "", false
			}
			w *= pcBase - t
		}
		bias = pcAdapt(pos-oldPos, len(out)+1, oldPos == 0)
		n += pos / (len(out) + 1)
		pos %= len(out) + 1
		if n > unicode.MaxRune || (n >= 0xD800 && n <= 0xDFFF) || len(out) >= pcMaxLabel {
			return "", false
		}
		out = append(out, 0)
		copy(out[pos+1:], out[pos:])
		out[pos] = rune(n)
		pos++
	}
	for _, r := range out {
		if r >= 0x80 {
			return string(out), true
		}
	}
	return "", false
}

// HostToASCII returns the ASCII (A-label) form of host for display: host
// lower-cased (Unicode lower case), each label holding a non-ASCII
// character replaced by "xn--" and its Punycode. ok is false when host is
// not valid UTF-8 or a label cannot be encoded. An ASCII host is returned
// lower-cased.
func HostToASCII(host string) (string, bool) {
	if !utf8.ValidString(host) {
		return "", false
	}
	host = strings.ToLower(host)
	if isASCII(host) {
		return host, true
	}
	labels := strings.Split(host, ".")
	for i, l := range labels {
		if isASCII(l) {
			continue
		}
		enc, ok := punyEncode(l)
		if !ok {
			return "", false
		}
		labels[i] = acePrefix + enc
	}
	return strings.Join(labels, "."), true
}

// HostToUnicode returns the Unicode form of host: each label that starts
// with "xn--" (any case) and is valid Punycode replaced by what it
// encodes. ok is false when such a label is not valid Punycode. A host
// without such labels is returned as it is.
func HostToUnicode(host string) (string, bool) {
	if !strings.Contains(strings.ToLower(host), acePrefix) {
		return host, true
	}
	labels := strings.Split(host, ".")
	for i, l := range labels {
		if len(l) < len(acePrefix) || !strings.EqualFold(l[:len(acePrefix)], acePrefix) {
			continue
		}
		dec, ok := punyDecode(l[len(acePrefix):])
		if !ok {
			return "", false
		}
		labels[i] = dec
	}
	return strings.Join(labels, "."), true
}

// DisplayHost returns host as mcpward shows it: unchanged when it is
// plain ASCII without encoded labels; otherwise its ASCII form followed by
// its Unicode form in parentheses ("xn--pple-43d.com (аpple.com)"),
// whichever of the two was written. A host whose forms cannot be computed
// (invalid UTF-8, invalid Punycode) is returned as written; the caller
// makes it safe for a terminal.
func DisplayHost(host string) string {
	ascii, uni, ok := hostForms(host)
	if !ok {
		return host
	}
	return ascii + " (" + uni + ")"
}

// hostForms returns the ASCII and Unicode forms of host and true when they
// differ (host is an IDN, written either way), false otherwise.
func hostForms(host string) (ascii, uni string, ok bool) {
	if isASCII(host) && !strings.Contains(strings.ToLower(host), acePrefix) {
		return "", "", false
	}
	a, okA := HostToASCII(host)
	if !okA {
		return "", "", false
	}
	u, okU := HostToUnicode(a)
	if !okU || u == a {
		return "", "", false
	}
	return a, u, true
}

// DisplayURL returns a URL (or a URL's display form, masked or not) with
// its host shown both ways when it is an IDN: the host replaced by its
// ASCII form and the Unicode form appended in parentheses
// ("https://xn--pple-43d.com/mcp (аpple.com)"). Anything that has no
// "scheme://host" shape, or whose host is plain ASCII, is returned as it
// is. It never parses more than the authority and never fails.
func DisplayURL(raw string) string {
	start, end, ok := urlHostSpan(raw)
	if !ok {
		return raw
	}
	ascii, uni, ok := hostForms(raw[start:end])
	if !ok {
		return raw
	}
	return raw[:start] + ascii + raw[end:] + " (" + uni + ")"
}

// URLHostIsIDN reports whether the host of raw (a URL or its display
// form) differs from its ASCII form, and then whether it mixes scripts
// (see MixedScript); both false when raw has no host or an ASCII one.
func URLHostIsIDN(raw string) (idn, mixed bool) {
	start, end, ok := urlHostSpan(raw)
	if !ok {
		return false, false
	}
	_, uni, ok := hostForms(raw[start:end])
	if !ok {
		return false, false
	}
	return true, MixedScript(uni)
}

// urlHostSpan returns the span of raw's host: after "scheme://" and any
// userinfo (up to the last "@" of the authority), before the port and the
// path, query or fragment. ok is false when raw has no "://", the host is
// empty, or it is a bracketed IP literal.
func urlHostSpan(raw string) (start, end int, ok bool) {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return 0, 0, false
	}
	start = i + 3
	authEnd := len(raw)
	if j := strings.IndexAny(raw[start:], "/?# "); j >= 0 {
		authEnd = start + j
	}
	if at := strings.LastIndexByte(raw[start:authEnd], '@'); at >= 0 {
		start += at + 1
	}
	if start < authEnd && raw[start] == '[' {
		return 0, 0, false
	}
	end = authEnd
	if c := strings.LastIndexByte(raw[start:authEnd], ':'); c >= 0 {
		end = start + c
	}
	return start, end, end > start
}

// MixedScript reports whether host (in its Unicode form) mixes writing
// systems: its letters come from more than one script, counting Han,
// Hiragana and Katakana as one (Japanese), Han and Hangul as one (Korean),
// and Common and Inherited characters (digits, "-", combining marks) as
// none. "аpple.com" (Cyrillic а, Latin pple and com) mixes; "bücher.de",
// "例え.テスト" and "пример.рф" do not.
func MixedScript(host string) bool {
	seen := map[string]bool{}
	for _, r := range host {
		if r < 0x80 {
			if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
				seen["Latin"] = true
			}
			continue
		}
		if s := scriptOf(r); s != "" {
			seen[s] = true
		}
	}
	if len(seen) <= 1 {
		return false
	}
	cjk := map[string]bool{"Han": true, "Hiragana": true, "Katakana": true, "Hangul": true, "Bopomofo": true}
	jp := seen["Hiragana"] || seen["Katakana"]
	ko := seen["Hangul"]
	n := 0
	for s := range seen {
		if !cjk[s] {
			n++
		}
	}
	switch {
	case jp && ko:
		return true
	case jp || ko || seen["Han"] || seen["Bopomofo"]:
		n++
	}
	return n > 1
}

// scriptOf returns the name of the unicode.Scripts table holding r, ""
// for Common, Inherited and unassigned code points.
func scriptOf(r rune) string {
	for name, t := range unicode.Scripts {
		if name == "Common" || name == "Inherited" {
			continue
		}
		if unicode.Is(t, r) {
			return name
		}
	}
	return ""
}
