package catalog

import (
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/mcpward/mcpward/ports"
)

// FuzzEntries feeds any listed prompt, resource and template and any
// prompt and read result: Build never panics and accounts for every entry
// (admitted or rejected), Get and Read never panic, a read result stays
// within the read cap and keeps valid UTF-8 valid, and a prompt result is
// either refused or made of user/assistant messages with object content.
func FuzzEntries(f *testing.F) {
	f.Add(`{"name":"p","arguments":[{"name":"a","required":true}]}`, `{"uri":"test://r"}`, `{"uriTemplate":"test://r/{x}"}`,
		`{"type":"text","text":"hello"}`, "user", "contents é", "a")
	f.Add(`{"name":"p","arguments":[{"name":"a"},{"name":"a"}]}`, `{"uri":"no scheme"}`, `{"uriTemplate":"{+u}"}`,
		`"str"`, "system", "", "//evil")
	f.Fuzz(func(t *testing.T, prompt, resource, template, msg, role, text, arg string) {
		cc := &contentCaller{
			prompt: ports.PromptResult{Messages: []ports.PromptMessage{{Role: role, Content: json.RawMessage(msg)}, {Role: role, Content: json.RawMessage(msg)}}},
			read:   ports.ReadResult{Contents: []ports.ResourceContents{{Text: text}, {Blob: []byte(text), IsBlob: true}, {Text: text}}},
		}
		l := Lists{Prompts: raws(prompt, prompt), Resources: raws(resource), ResourceTemplates: raws(template)}
		const readCap = 16
		cat := Build("srv", ports.SessionIdentity{}, l, cc, &Options{AdmissionCap: 8, ReadCap: readCap})
		kinds := map[ports.ListKind]int{}
		for _, r := range cat.Rejected {
			kinds[r.Kind]++
		}
		if len(cat.Prompts)+kinds[ports.ListPrompts] != 2 || len(cat.Resources)+kinds[ports.ListResources] != 1 ||
			len(cat.ResourceTemplates)+kinds[ports.ListResourceTemplates] != 1 {
			t.Fatalf("entries unaccounted for: %+v", cat.Rejected)
		}
		ctx := context.Background()
		for _, p := range cat.Prompts {
			args := map[string]string{}
			for _, a := range p.Arguments() {
				args[a.Name] = arg
			}
			res, err := p.Get(ctx, args)
			if err == nil {
				for _, m := range res.Messages {
					if m.Role != "user" && m.Role != "assistant" || len(m.Content) == 0 || !json.Valid(m.Content) {
						t.Fatalf("admitted message %q %q", m.Role, m.Content)
					}
				}
			}
		}
		reads := []func() (ports.ReadResult, error){func() (ports.ReadResult, error) { return cat.ReadResource(ctx, "test://x") }}
		for _, r := range cat.Resources {
			reads = append(reads, func() (ports.ReadResult, error) { return r.Read(ctx) })
		}
		for _, tp := range cat.ResourceTemplates {
			vars := map[string]string{}
			for _, v := range tp.Vars() {
				vars[v] = arg
			}
			reads = append(reads, func() (ports.ReadResult, error) { return tp.Read(ctx, vars) })
		}
		for _, read := range reads {
			res, err := read()
			if err != nil {
				continue
			}
			n := 0
			for _, c := range res.Contents {
				n += len(c.Text) + len(c.Blob)
				if utf8.ValidString(text) && !utf8.ValidString(c.Text) {
					t.Fatalf("a cut split a character")
				}
			}
			if n > readCap {
				t.Fatalf("read of %d bytes over the cap", n)
			}
		}
	})
}
