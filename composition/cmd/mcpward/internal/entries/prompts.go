package entries

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/ports"
)

// ServerPrompts is the stable JSON shape of one server of prompts --json.
type ServerPrompts struct {
	Name     string             `json:"name"`
	State    string             `json:"state"`
	Class    string             `json:"class"`
	Reason   string             `json:"reason"`
	Prompts  []Prompt           `json:"prompts"`
	Rejected []catalog.Rejected `json:"rejected"`
}

// Prompt is one prompt of prompts --json.
type Prompt struct {
	// Name is the host-facing name, ServerPrompt the name on the server.
	Name         string                 `json:"name"`
	ServerPrompt string                 `json:"server_prompt"`
	Title        string                 `json:"title"`
	Description  string                 `json:"description"`
	Arguments    []ports.PromptArgument `json:"arguments"`
}

// ToServerPrompts returns the prompts --json shape of r, with cat its
// catalog (nil when it has none).
func ToServerPrompts(r composition.ServerStatus, cat *catalog.Catalog) ServerPrompts {
	j := ServerPrompts{Name: r.Name, State: string(r.State), Class: view.ClassOf(r), Reason: r.Reason,
		Prompts: []Prompt{}, Rejected: rejectedOf(r, ports.ListPrompts)}
	if cat != nil {
		for _, p := range cat.Prompts {
			args := p.Arguments()
			if args == nil {
				args = []ports.PromptArgument{}
			}
			j.Prompts = append(j.Prompts, Prompt{Name: p.HostName(), ServerPrompt: p.NameOnServer(), Title: p.Title(),
				Description: p.Description(), Arguments: args})
		}
	}
	return j
}

// WritePrompts writes prompts' text for r: its state, then each prompt's
// host-facing name, SERVER/PROMPT and first line of description, each
// argument under it, and the rejected prompts.
func WritePrompts(w io.Writer, r composition.ServerStatus, cat *catalog.Catalog) {
	fmt.Fprintf(w, "%s: %s\n", termsafe.Line(r.Name), termsafe.Line(StateLine(r)))
	if cat != nil && len(cat.Prompts) > 0 {
		for _, p := range cat.Prompts {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", termsafe.Line(p.HostName()), termsafe.Line(r.Name+"/"+p.NameOnServer()), FirstLine(p.Description()))
			_ = tw.Flush()
			for _, a := range p.Arguments() {
				req := ""
				if a.Required {
					req = " (required)"
				}
				if d := FirstLine(a.Description); d != "" {
					req += ": " + d
				}
				fmt.Fprintf(w, "      %s%s\n", termsafe.Line(a.Name), req)
			}
		}
	} else if r.State == composition.StateConnected {
		fmt.Fprintln(w, "  (no prompts)")
	}
	writeRejected(w, r, ports.ListPrompts)
}

// PromptResult is prompt --json's output.
type PromptResult struct {
	Server      string          `json:"server"`
	Prompt      string          `json:"prompt"`
	Description string          `json:"description"`
	Truncated   bool            `json:"truncated"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptMessage is one message of prompt --json.
type PromptMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// ToPromptResult returns prompt --json's shape of res.
func ToPromptResult(server, prompt string, res ports.PromptResult) PromptResult {
	j := PromptResult{Server: server, Prompt: prompt, Description: res.Description, Truncated: res.Truncated, Messages: []PromptMessage{}}
	for _, m := range res.Messages {
		j.Messages = append(j.Messages, PromptMessage{Role: m.Role, Content: m.Content})
	}
	return j
}

// WritePromptResult writes the messages for people: each message's role
// in brackets, then its text (see contentLines), every line but the first
// indented.
func WritePromptResult(w io.Writer, res ports.PromptResult) {
	var lines []string
	for _, m := range res.Messages {
		lines = append(lines, "["+termsafe.Line(m.Role)+"]")
		lines = append(lines, contentLines(m.Content)...)
	}
	writeLines(w, lines)
}
