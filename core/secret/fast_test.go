package secret

import (
	"strings"
	"testing"
)

// The fast paths of this package (allocation-free IsCredentialName and
// IsCredentialHeader, MaskLiterals' need tests) must decide exactly as the
// plain rules do. These tests compare them on chosen and fuzzed inputs.

// fastNameSeeds are names at the edges of the word rule.
var fastNameSeeds = []string{
	"", "_", "__", "A", "a", "KEY", "key", "SSH_KEY_2", "KEY_2_3", "2", "22_33", "MONKEY", "KEYBOARD_LAYOUT", "TOKENIZER_MODEL",
	"GITHUB_TOKEN", "apiKey", "APIKey", "APIToken", "OPENAI_API_KEY", "api_keys", "aws-access-key-id", "x-auth-token",
	"db.password", "TOKEN2", "V2_TOKEN_3", "HTTPSProxy", "aB", "Ab", "ABc", "a1B2c3", "my token", "a/token", "PATH", "HOME",
	"NODE_OPTIONS", "Authorization", "Proxy-Authorization", "COOKIE", "Set-Cookie", "X-Api-Key", "api-key", "X-AUTH-TOKEN",
	"Coo\u212aie", "\u212aEY", "tok\xffen", "é_TOKEN", "a_b_c_d_e_f_g_h_i_j_k_l_m_n_o_p", "a_b_c_d_e_f_g_h_i_j_k_l_m_n_o_p_q_token",
	strings.Repeat("x", 127) + "_KEY", strings.Repeat("x", 200) + "_token", strings.Repeat("ab", 70) + "KEY",
	"CLIENT_SECRET", "clientSecret", "PRIVATE-KEY", "Private.Key.2", "access_KEY",
	"SSH_AUTH_SOCK", "GITHUB_TOKEN_FILE", "PRIVATE_KEY_PATH", "sshKeyPath", "TOKEN_FILE_2", "NO_AUTH", "noAuth", "PWD", "pwd",
	"OLDPWD", "MYSQL_PWD", "PWD_TOKEN", "AUTH_MODE", "SESSION_TIMEOUT", "FILE_TOKEN", "NO", "KEY_NAME_2_3",
}

func fastCheckName(t *testing.T, name string) {
	t.Helper()
	if got, want := IsCredentialName(name), isCredentialNameWords(splitWords(name)); got != want {
		t.Fatalf("IsCredentialName(%q) = %v, the plain rule says %v", name, got, want)
	}
	if got, want := IsCredentialHeader(name), credentialHeaders[strings.ToLower(name)] || isCredentialNameWords(splitWords(name)); got != want {
		t.Fatalf("IsCredentialHeader(%q) = %v, the plain rule says %v", name, got, want)
	}
}

func TestFastNames(t *testing.T) {
	for _, name := range fastNameSeeds {
		fastCheckName(t, name)
	}
	for k := range credentialHeaders {
		fastCheckName(t, k)
		fastCheckName(t, strings.ToUpper(k))
	}
}

func FuzzFastNames(f *testing.F) {
	for _, name := range fastNameSeeds {
		f.Add(name)
	}
	f.Fuzz(func(t *testing.T, name string) { fastCheckName(t, name) })
}

// fastMaskSeeds hold every shape, near misses of the need tests, and
// Unicode case folds the Bearer/Basic rule honours.
var fastMaskSeeds = []string{
	"", "npx", "--root", "/home/dev/work", "https://mcp.example.com/v1/mcp?tenant=acme",
	"https://user:pass@host/p", "https://<redacted:X>:pw@h", "x://a:b@", "Bearer abcdefghij", "bearer\tabcdefghij", "BASIC abcdefghij",
	"ba\u017fic abcdefghij", "Ba\u017fic\tabcdefghij", "bEaReR 12345678", "Bearer <redacted>", "Bearer ${TOKEN:-<redacted>}",
	"?token=abc&x=1", "&access%5Ftoken=v", "?a%ZZ_token=v", "?x+token=v", "?tok%65n=", "?token\t=v", "??token=v", "&&api_key=1", "?=token", "?a=1&api_key=${API_KEY}", "--api-key=VALUE", "-client_secret=V", "x --token=abc",
	"ghp_0123456789abcdefghij", "gho_0123456789abcdefghij", "github_pat_0123456789abcdefghij", "sk-0123456789abcdefghij",
	"xoxb-0123456789a", "AKIA0123456789ABCDEF", "ASIA0123456789ABCDEF", "AIza" + strings.Repeat("x", 30),
	"eyJhbGc.eyJzdWI.sig", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----abc",
	"Bearer ghp_0123456789abcdefghij?token=sk-0123456789abcdefghij", "\xff\x00Bearer \xffabcdefghij",
	"rk_live_0123456789", "sk_test_0123456789", "k_prod_x", "whsec_" + strings.Repeat("a", 24), "npm_" + strings.Repeat("a", 36),
	"https://hooks.slack.com/services/T0/B0/abcdefgh", "https://discordapp.com/api/webhooks/1/" + strings.Repeat("a", 16),
	"//r/:_authToken=v", "_auth=v", "x_password=v", "glpat-" + strings.Repeat("a", 20), "gldt-", "hf_" + strings.Repeat("a", 30),
	"api_org_" + strings.Repeat("a", 30), "SG." + strings.Repeat("a", 16) + "." + strings.Repeat("a", 16), "SK" + strings.Repeat("a", 32),
	"xoxe-0123456789", "xapp-1-0123456789", "ABIA0123456789ABCDEF", "ACCA0123456789ABCDEF", "dor_v1_" + strings.Repeat("a", 64),
	"pypi-AgEIcHlwaS5vcmc" + strings.Repeat("a", 50), "shpss_" + strings.Repeat("a", 32), "lin_api_" + strings.Repeat("a", 40),
	"ntn_" + strings.Repeat("1", 40), "pplx-" + strings.Repeat("a", 40), "gsk_" + strings.Repeat("a", 40), "sntryu_" + strings.Repeat("a", 40),
	"PMAK-" + strings.Repeat("a", 24) + "-" + strings.Repeat("b", 34), "hvs." + strings.Repeat("a", 90), "ATATT3" + strings.Repeat("a", 100),
	"AGE-SECRET-KEY-1" + strings.Repeat("Q", 58), "API_KEY=v", "a=1 TOKEN=v", "x;Password=v", "9TOKEN=v", "_token=", "/token=v",
	"a-token=v", "token==v", "=token=v", "&&token=", "TOKEN\t=v", "--token=", "-token=v", "---token=v", "--9token=v", "x=--token=v",
	"a,--api-key=v", "'--secret=v'", "x--token=v", "--a=x=--token=v", "--port=1 --token=v", "--to.ken=v", "-=v", "--=v", "-----BEGIN PGP PRIVATE KEY BLOCK-----x", "S", "SK", "g", "gh", "\xffS",
}

func fastCheckMask(t *testing.T, s string) {
	t.Helper()
	if got, want := maskPassWith(s, true), maskPassWith(s, false); got != want {
		t.Fatalf("maskPass(%q) = %q with need tests, %q without", s, got, want)
	}
	found := litScan(s)
	for i, r := range maskRules {
		if spans := r.spans(s, nil); !r.need(s) && len(spans) > 0 {
			t.Fatalf("need test of %s rejects %q, where the rule masks %v", r.re, s, spans)
		}
		if len(r.lits) > 0 && r.runs(s, found, i) != r.need(s) {
			t.Fatalf("litScan of %q says %v for %s, strings.Contains says %v", s, r.runs(s, found, i), r.re, r.need(s))
		}
	}
}

func TestFastMask(t *testing.T) {
	for _, s := range fastMaskSeeds {
		fastCheckMask(t, s)
	}
}

// FuzzFastMask checks that no need test rejects a text its rule masks
// something in, so masking with and without them is the same.
func FuzzFastMask(f *testing.F) {
	for _, s := range fastMaskSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { fastCheckMask(t, s) })
}
