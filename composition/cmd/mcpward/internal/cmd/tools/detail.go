package tools

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/core/refusal"
)

// splitTool splits SERVER/TOOL; ok is false for a plain server name.
func splitTool(name string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(name, "/")
	return server, tool, ok && server != "" && tool != ""
}

// Param is one parameter of a tool's input schema, in words.
type Param struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Description string `json:"description,omitempty"`
}

// Params reads the top-level properties of an input schema: required
// ones first, each group by name; a property without a type is "any".
func Params(schema json.RawMessage) []Param {
	var s struct {
		Properties map[string]struct {
			Type        json.RawMessage `json:"type"`
			Description string          `json:"description"`
			Items       *struct {
				Type json.RawMessage `json:"type"`
			} `json:"items"`
			Enum []json.RawMessage `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := make([]Param, 0, len(s.Properties))
	for name, p := range s.Properties {
		t := typeOf(p.Type)
		if t == "array" && p.Items != nil {
			if it := typeOf(p.Items.Type); it != "any" {
				t = "array of " + it
			}
		}
		if len(p.Enum) > 0 {
			t += fmt.Sprintf(" (one of %d values)", len(p.Enum))
		}
		out = append(out, Param{Name: name, Type: t, Required: slices.Contains(s.Required, name), Description: p.Description})
	}
	slices.SortFunc(out, func(a, b Param) int {
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// typeOf renders a schema's "type": "string", "string or null", "any".
func typeOf(raw json.RawMessage) string {
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return one
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil && len(many) > 0 {
		return strings.Join(many, " or ")
	}
	return "any"
}

// ToolDetail is tools SERVER/TOOL --json.
type ToolDetail struct {
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  []Param         `json:"parameters"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// findTool returns the detail of tool on r, or the unknown_tool refusal.
func findTool(r composition.ServerStatus, tool string) (ToolDetail, error) {
	for _, t := range r.Tools {
		if t.NameOnServer == tool {
			return ToolDetail{Server: r.Name, Tool: tool, Name: t.Name, Title: t.Title, Description: t.Description,
				Parameters: Params(t.InputSchema), InputSchema: t.InputSchema}, nil
		}
	}
	return ToolDetail{}, &refusal.Error{Class: refusal.Config, Reason: composition.ReasonUnknownTool, Server: r.Name,
		Detail: "the server's catalog has no tool of that name; \"mcpward tools " + r.Name + "\" lists its tools"}
}

// WriteDetail writes one tool for people: its names, title and
// description, then its parameters in words, one a line (name, type,
// required or optional, the first line of its description), every
// server-written string escaped.
func WriteDetail(w io.Writer, d ToolDetail) {
	fmt.Fprintf(w, "%s/%s (%s)\n", termsafe.Line(d.Server), termsafe.Line(d.Tool), termsafe.Line(d.Name))
	if d.Title != "" {
		fmt.Fprintf(w, "  title: %s\n", termsafe.Line(d.Title))
	}
	for _, l := range strings.Split(strings.TrimSpace(d.Description), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			fmt.Fprintf(w, "  %s\n", termsafe.Line(l))
		}
	}
	if len(d.Parameters) == 0 {
		fmt.Fprintln(w, "  parameters: none")
		return
	}
	fmt.Fprintln(w, "  parameters:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range d.Parameters {
		req := "optional"
		if p.Required {
			req = "required"
		}
		desc, _, _ := strings.Cut(strings.TrimSpace(p.Description), "\n")
		line := "    " + termsafe.Line(p.Name) + "\t" + termsafe.Line(p.Type) + "\t" + req
		if desc != "" {
			line += "\t" + termsafe.Line(desc)
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()
}
