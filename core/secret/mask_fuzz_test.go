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

// plantHex derives n lower-case hex digits from seed.
func plantHex(seed []byte, n int) string {
	const hex = "0123456789abcdef"
	b := []byte(plantSecret(seed, n, false))
	for i, c := range b {
		b[i] = hex[int(c)%len(hex)]
	}
	return string(b)
}

// plantKinds is how many shapes plant knows.
const plantKinds = 33

// plant returns text containing a literal of shape kind, and the part of it
// that must never survive masking.
func plant(kind uint8, seed []byte) (text, hidden string) {
	s := plantSecret(seed, 24, false)
	long := plantSecret(seed, 40, false)
	switch kind % plantKinds {
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
	case 13:
		return "-client_secret=" + s, s
	case 14:
		return "rk_live_" + s, s
	case 15:
		return "sk_test_" + s, s
	case 16:
		n := plantSecret(seed, 36, false)
		return "npm_" + n, n
	case 17:
		return "https://hooks.slack.com/services/T0/B0/" + s, s
	case 18:
		return "//registry.npmjs.org/:_authToken=" + s, s
	case 19:
		return "glpat-" + s, s
	case 20:
		return "hf_" + long, long
	case 21:
		return "SG." + s + "." + long, s + "." + long
	case 22:
		h := plantHex(seed, 32)
		return "SK" + h, h
	case 23:
		return "xapp-1-" + s, s
	case 24:
		return "-----BEGIN PGP PRIVATE KEY BLOCK-----\n" + s + "\n-----END PGP PRIVATE KEY BLOCK-----", s
	case 25:
		h := plantHex(seed, 64)
		return "dop_v1_" + h, h
	case 26:
		h := plantHex(seed, 32)
		return "shpat_" + h, h
	case 27:
		return "lin_api_" + long, long
	case 28:
		return "https://discord.com/api/webhooks/1234/" + s, s
	case 29:
		return "whsec_" + s, s
	case 30:
		return "pypi-AgEIcHlwaS5vcmc" + long + long[:10], long
	case 31:
		return "-e GITHUB_PERSONAL_ACCESS_TOKEN=" + s, s
	default:
		return "xoxe-1-" + s, s
	}
}

// FuzzMaskLiterals checks that MaskLiterals never panics, is idempotent
// and never lets a planted credential of a known shape through, whatever
// text surrounds it, and that MaskDigests (the review's masking) does not
// either.
func FuzzMaskLiterals(f *testing.F) {
	f.Add("prefix", "suffix", uint8(0), []byte("seed"))
	f.Add("https://u:", "@h", uint8(10), []byte{1, 2, 3})
	f.Add("--token=", "?token=", uint8(12), []byte{})
	f.Add("-----BEGIN RSA PRIVATE KEY-----", "", uint8(7), []byte{0xff})
	f.Add("Bearer", "<redacted:X>", uint8(8), []byte("zz"))
	f.Add("eyJa.b.", ".c", uint8(6), []byte("jwt"))
	f.Add("\xff\x00", "\n\t", uint8(4), []byte("aws"))
	for kind := uint8(13); kind < plantKinds; kind++ {
		f.Add("--token", "_authToken=", kind, []byte{kind, 7})
	}
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
		// The approval review's masking hides it too.
		if dig, _ := secret.MaskDigests(in); strings.Contains(dig, hidden) {
			t.Fatalf("planted secret survived the review masking:\n  in %q\n out %q", in, dig)
		}
	})
}
