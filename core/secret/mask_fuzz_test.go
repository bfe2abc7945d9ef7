package secret_test

import (
	"strings"
	"testing"

	"github.com/mcpward/mcpward/core/secret"
)

// plantAlphabet is the alphabet planted secrets are drawn from: letters and
// digits only, so a planted secret is one word every shape accepts.
const plantAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// plantSecret derives a secret of n characters from seed.
func plantSecret(seed []byte, n int, upperDigitsOnly bool) string {
	alpha := plantAlphabet
	if upperDigitsOnly {
		alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	}
	b := make([]byte, n)
	for i := range b {
		var c byte = byte(i * 7)
		if len(seed) > 0 {
			c += seed[i%len(seed)] + byte(i/len(seed))
		}
		b[i] = alpha[int(c)%len(alpha)]
	}
	return string(b)
}

// plant returns text containing a literal of shape kind, and the part of it
// that must never survive masking.
func plant(kind uint8, seed []byte) (text, hidden string) {
	s := plantSecret(seed, 24, false)
	switch kind % 14 {
	case 0:
		return "ghp_" + s, s
	case 1:
		return "github_pat_" + s, s
	case 2:
		return "sk-" + s, s
	case 3:
		return "xoxb-" + s, s
	case 4:
		u := plantSecret(seed, 16, true)
		return "AKIA" + u, u
	case 5:
		return "AIza" + s + s[:10], s
	case 6:
		return "eyJ" + s[:8] + "." + s[8:16] + "." + s[16:], s[:8] + "." + s[8:16] + "." + s[16:]
	case 7:
		return "-----BEGIN EC PRIVATE KEY-----\n" + s + "\n-----END EC PRIVATE KEY-----", s
	case 8:
		return "Bearer " + s, s
	case 9:
		return "Basic " + s + "==", s
	case 10:
		return "https://user:" + s + "@example.com/p", s
	case 11:
		return "https://example.com/p?a=1&access_token=" + s + "&b=2", s
	case 12:
		return "--api-key=" + s, s
	default:
		return "-client_secret=" + s, s
	}
}

// FuzzMaskLiterals checks that MaskLiterals never panics, is idempotent
// and never lets a planted credential of a known shape through, whatever
// text surrounds it.
func FuzzMaskLiterals(f *testing.F) {
	f.Add("prefix", "suffix", uint8(0), []byte("seed"))
	f.Add("https://u:", "@h", uint8(10), []byte{1, 2, 3})
	f.Add("--token=", "?token=", uint8(12), []byte{})
	f.Add("-----BEGIN RSA PRIVATE KEY-----", "", uint8(7), []byte{0xff})
	f.Add("Bearer", "<redacted:X>", uint8(8), []byte("zz"))
	f.Add("eyJa.b.", ".c", uint8(6), []byte("jwt"))
	f.Add("\xff\x00", "\n\t", uint8(4), []byte("aws"))
	f.Fuzz(func(t *testing.T, prefix, suffix string, kind uint8, seed []byte) {
		// Arbitrary text alone: no panic, idempotent.
		for _, s := range []string{prefix, suffix, prefix + suffix} {
			once := secret.MaskLiterals(s)
			if twice := secret.MaskLiterals(once); twice != once {
				t.Fatalf("not idempotent on %q:\n once %q\ntwice %q", s, once, twice)
			}
		}

		token, hidden := plant(kind, seed)
		if strings.Contains(prefix, hidden) || strings.Contains(suffix, hidden) ||
			strings.Contains(secret.Redacted, hidden) {
			t.Skip("the planted secret occurs in the surrounding text")
		}
		in := prefix + " " + token + " " + suffix
		out := secret.MaskLiterals(in)
		if strings.Contains(out, hidden) {
			t.Fatalf("planted secret survived:\n  in %q\n out %q", in, out)
		}
		if twice := secret.MaskLiterals(out); twice != out {
			t.Fatalf("not idempotent on %q:\n once %q\ntwice %q", in, out, twice)
		}
	})
}
