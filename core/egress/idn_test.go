package egress

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Known encodings: RFC 3492 §7.1 samples and registry-published names.
var idnVectors = []struct{ unicode, ascii string }{
	{"аpple.com", "xn--pple-43d.com"},
	{"bücher.example", "xn--bcher-kva.example"},
	{"例え.テスト", "xn--r8jz45g.xn--zckzah"},
	{"пример.рф", "xn--e1afmkfd.xn--p1ai"},
	{"münchen.de", "xn--mnchen-3ya.de"},
	{"ليهمابتكلموشعربي؟", "xn--egbpdaj6bu4bxfgehfvwxn"},
	{"他们为什么不说中文", "xn--ihqwcrb4cv8a8dqg056pqjye"},
	{"pročprostěnemluvíčesky", "xn--proprostnemluvesky-uyb24dma41a"},
	{"למההםפשוטלאמדבריםעברית", "xn--4dbcagdahymbxekheh6e0a7fei0b"},
	{"почемужеонинеговорятпорусски", "xn--b1abfaaepdrnnbgefbadotcwatmq2g4l"},
	{"porquénopuedensimplementehablarenespañol", "xn--porqunopuedensimplementehablarenespaol-fmd56a"},
	{"3年b組金八先生", "xn--3b-ww4c5e180e575a65lsy2b"},
}

func TestHostToASCII(t *testing.T) {
	for _, v := range idnVectors {
		got, ok := HostToASCII(v.unicode)
		require.True(t, ok, v.unicode)
		assert.Equal(t, v.ascii, got, v.unicode)
		back, ok := HostToUnicode(got)
		require.True(t, ok, got)
		assert.Equal(t, v.unicode, back)
	}
	got, ok := HostToASCII("Example.COM")
	assert.True(t, ok)
	assert.Equal(t, "example.com", got)
	got, ok = HostToASCII("ÄPPLE.com")
	assert.True(t, ok)
	assert.Equal(t, "xn--pple-koa.com", got, "lower-cased before encoding")
	_, ok = HostToASCII("a\xffb.com")
	assert.False(t, ok)
}

func TestHostToUnicodeInvalid(t *testing.T) {
	for _, h := range []string{"xn--.com", "xn--abc-.com", "xn--99999999999999a.com", "xn--é.com", "xn--ls8h-", "xn--zz"} {
		_, ok := HostToUnicode(h)
		assert.False(t, ok, h)
	}
	got, ok := HostToUnicode("XN--PPLE-43D.COM")
	assert.True(t, ok)
	assert.Equal(t, "аPPLE.COM", got, "basic code points keep their case")
}

func TestDisplayHost(t *testing.T) {
	tests := []struct{ in, want string }{
		{"аpple.com", "xn--pple-43d.com (аpple.com)"},
		{"xn--pple-43d.com", "xn--pple-43d.com (аpple.com)"},
		{"apple.com", "apple.com"},
		{"Apple.COM", "Apple.COM"},
		{"xn--invalid-.com", "xn--invalid-.com"},
		{"127.0.0.1", "127.0.0.1"},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, DisplayHost(tt.in), tt.in)
	}
}

func TestDisplayURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://аpple.com/mcp", "https://xn--pple-43d.com/mcp (аpple.com)"},
		{"https://аpple.com:8443/mcp?x=1", "https://xn--pple-43d.com:8443/mcp?x=1 (аpple.com)"},
		{"https://u:<redacted:P>@аpple.com", "https://u:<redacted:P>@xn--pple-43d.com (аpple.com)"},
		{"https://xn--pple-43d.com/", "https://xn--pple-43d.com/ (аpple.com)"},
		{"https://apple.com/", "https://apple.com/"},
		{"https://[::1]:80/", "https://[::1]:80/"},
		{"not a url", "not a url"},
		{"https://", "https://"},
		{"https://${HOST}/x", "https://${HOST}/x"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, DisplayURL(tt.in), tt.in)
	}
}

func TestMixedScript(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"аpple.com", true},      // Cyrillic а with Latin
		{"аррӏе.com", true},      // all-Cyrillic label, Latin TLD
		{"ρaypal.com", true},     // Greek ρ
		{"bücher.de", false},     // Latin only
		{"пример.рф", false},     // Cyrillic only
		{"例え.テスト", false},        // Japanese: Han, Hiragana, Katakana
		{"한국.한국", false},         // Hangul
		{"中国.cn", true},          // Han label with a Latin TLD
		{"example.com", false},   // ASCII
		{"ex4mple-1.com", false}, // digits and hyphens are no script
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, MixedScript(tt.host), tt.host)
	}
}

// FuzzPunycode: encoding never panics, a label with a non-ASCII code point
// round-trips, and decoding arbitrary input never panics and yields valid
// UTF-8 whose encoding gives back the input (lower-cased) when it
// succeeds.
func FuzzPunycode(f *testing.F) {
	for _, v := range idnVectors {
		f.Add(v.unicode)
		f.Add(strings.TrimPrefix(v.ascii, "xn--"))
	}
	f.Add("")
	f.Add("-")
	f.Add("a-")
	f.Add("\U0010FFFF")
	f.Add(strings.Repeat("é", 300))
	f.Fuzz(func(t *testing.T, s string) {
		if enc, ok := punyEncode(s); ok {
			if !isASCII(enc) {
				t.Fatalf("encoding of %q is not ASCII: %q", s, enc)
			}
			if !isASCII(s) {
				dec, ok := punyDecode(enc)
				if !ok || dec != s {
					t.Fatalf("round trip of %q: %q -> %q, %v", s, enc, dec, ok)
				}
			}
		}
		if dec, ok := punyDecode(s); ok {
			if !utf8.ValidString(dec) {
				t.Fatalf("decoding of %q is not UTF-8", s)
			}
			enc, ok := punyEncode(dec)
			if !ok || !strings.EqualFold(enc, s) {
				// Decoding is not injective over case and over redundant
				// digits; the encoding of the decoded label must decode alike.
				if dec2, ok2 := punyDecode(enc); !ok2 || dec2 != dec {
					t.Fatalf("re-encoding of %q (%q) gives %q", s, dec, enc)
				}
			}
		}
		_ = DisplayURL("https://" + s + "/x")
		_ = DisplayHost(s)
		_ = MixedScript(s)
	})
}
