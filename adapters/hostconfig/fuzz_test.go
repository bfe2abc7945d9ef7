package hostconfig_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpward/mcpward/adapters/hostconfig"
	"github.com/mcpward/mcpward/core/definition"
)

// fuzzDecode checks Decode on arbitrary bytes of one format: it never
// panics, and whatever it returns without error is our format, decoding
// through definition.Decode with exactly the reported servers, each a
// usable definition, and the reported overlay; no finding is about an
// imported server's refusal.
func fuzzDecode(f *testing.F, format hostconfig.Format, opts hostconfig.Options) {
	for _, fx := range fixtures {
		if fx.format == format {
			data, err := os.ReadFile(filepath.Join("testdata", fx.file))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(`{"mcpServers":{"a":{"command":"${x","args":["$A","${env:B}","${input:c}"]}}}`))
	f.Add([]byte("{\"servers\":{\"a\":{\"url\":\"u\",\"headers\":{\"A\":\"1\",\"a\":\"2\"}}}}"))
	f.Add([]byte("[mcp_servers.a]\nurl = \"https://x\"\nbearer_token_env_var = \"T\"\nhttp_headers = { authorization = \"x\" }\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := hostconfig.Decode(format, data, opts)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error text spans lines")
			}
			return
		}
		doc := definition.Decode(definition.Source{Data: res.JSON})
		if doc.Problem != nil {
			t.Fatalf("output is not our format: %v", doc.Problem.Kind)
		}
		var names []string
		for _, e := range doc.Entries {
			if e.Def == nil || e.Def.Refusal != "" {
				t.Fatalf("imported entry %q is not usable: %s %s", e.Name, e.Problem, e.Field)
			}
			names = append(names, e.Name)
		}
		if !slices.Equal(names, res.Servers) || !slices.Equal(doc.Disabled, res.Disabled) {
			t.Fatalf("servers %q / overlay %q differ from the result's %q / %q", names, doc.Disabled, res.Servers, res.Disabled)
		}
		for _, fd := range res.Findings {
			if fd.Kind == hostconfig.FindingRefused && slices.Contains(names, fd.Server) {
				t.Fatalf("refused server %q was imported", fd.Server)
			}
		}
	})
}

func FuzzClaudeCode(f *testing.F) {
	fuzzDecode(f, hostconfig.ClaudeCode, hostconfig.Options{Workspace: "/home/dev/work/app", Local: true})
}

func FuzzClaudeDesktop(f *testing.F) {
	fuzzDecode(f, hostconfig.ClaudeDesktop, hostconfig.Options{})
}

func FuzzCursor(f *testing.F) {
	fuzzDecode(f, hostconfig.Cursor, hostconfig.Options{Workspace: "/home/dev/work/app"})
}

func FuzzVSCode(f *testing.F) {
	fuzzDecode(f, hostconfig.VSCode, hostconfig.Options{Workspace: "/home/dev/work/app"})
}

func FuzzCodex(f *testing.F) {
	fuzzDecode(f, hostconfig.Codex, hostconfig.Options{})
}

func FuzzGemini(f *testing.F) {
	fuzzDecode(f, hostconfig.Gemini, hostconfig.Options{})
}
