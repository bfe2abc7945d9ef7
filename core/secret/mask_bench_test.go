package secret

import "testing"

// benchDisplayed are values as a projection displays them: most hold no
// credential (commands, flags, paths, URLs), a few hold one.
var benchDisplayed = []string{
	"npx", "-y", "@modelcontextprotocol/server-github", "--root", "/home/dev/work/42", "--verbose",
	"--max-old-space-size=4096", "/home/dev/work", "https://mcp42.example.com/v1/mcp?tenant=acme",
	"uvx", "mcp-server-fetch", "--port=8080", "node", "/opt/servers/github/dist/index.js",
	"https://api.githubcopilot.com/mcp/", "--token=<redacted:GITHUB_TOKEN>",
	"ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "https://user:hunter2@db.example.com/x",
	"Bearer abcdefghijklmnop", "--api-key=abc123",
}

// BenchmarkMaskLiterals masks each of benchDisplayed once per op.
func BenchmarkMaskLiterals(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range benchDisplayed {
			_ = MaskLiterals(s)
		}
	}
}

// BenchmarkMaskLiteralsClean masks only the values that hold no
// credential, the common case the prefilters are for.
func BenchmarkMaskLiteralsClean(b *testing.B) {
	clean := benchDisplayed[:15]
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range clean {
			_ = MaskLiterals(s)
		}
	}
}
