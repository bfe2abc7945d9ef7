// Package entries is what the prompts, prompt, resources and read commands
// share: the state of a connected server as an error, --args parsing, and
// the stable JSON shapes and safe text of prompts, resources and their
// results.
package entries

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// ServerErr is nil for a connected server, else the error that says why r
// cannot be used (as "mcpward call" reports it).
func ServerErr(r composition.ServerStatus) error {
	switch r.State {
	case composition.StateConnected:
		return nil
	case composition.StateFailed:
		var err error = &refusal.Error{Class: r.Class, Reason: r.Reason, Server: r.Name, Detail: "the server could not be connected"}
		err = &view.FailedServer{Err: err, Detail: r.Detail}
		var note string
		if why := view.FailureText(r.Detail); why != "" {
			note = r.Name + ": " + why
		}
		return &cmdutil.NotedError{Err: err, Note: note, Hint: view.DoctorHint(r.Name, r.Reason, r.Detail)}
	case composition.StateUnknown:
		return refusal.New(refusal.Config, composition.ReasonUnknownServer, r.Name)
	}
	return &refusal.Error{Class: refusal.Refused, Reason: r.Reason, Server: r.Name,
		Detail: "the server is " + string(r.State) + "; run \"mcpward show " + r.Name + "\""}
}

// ParseArgs parses --args: "" is none, else a JSON object whose values are
// all strings (prompt arguments and template variables are strings).
func ParseArgs(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return nil, cmdutil.FlagErrorf("--args takes a JSON object of string values, like '{\"city\":\"Oslo\"}'")
	}
	return m, nil
}

// StateLine is a server's state for the listing commands.
func StateLine(r composition.ServerStatus) string {
	switch r.State {
	case composition.StateConnected:
		s := "connected"
		if r.Stale {
			s += ", STALE"
		}
		if r.Reason != "" {
			s += ", discovery failed (" + r.Class.String() + " " + r.Reason + ")"
		}
		return s
	case composition.StateFailed:
		s := "failed (" + r.Class.String() + " " + r.Reason + ")"
		if why := view.FailureText(r.Detail); why != "" {
			s += ": " + why
		}
		return s
	case composition.StateUnknown:
		return "unknown (no source defines it)"
	}
	s := string(r.State)
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	return s
}

// Failed reports whether the listing commands exit 1 for r: a failed or
// unknown server, or one named that is not connected.
func Failed(r composition.ServerStatus, named bool) bool {
	return r.State == composition.StateFailed || r.State == composition.StateUnknown ||
		named && r.State != composition.StateConnected
}

// FirstLine is the first line of a description, made safe.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return termsafe.Line(strings.TrimSpace(s))
}

// rejectedOf returns the entries of r rejected from the kinds given.
func rejectedOf(r composition.ServerStatus, kinds ...ports.ListKind) []catalog.Rejected {
	out := []catalog.Rejected{}
	for _, rj := range r.Rejected {
		for _, k := range kinds {
			if rj.Kind == k {
				out = append(out, rj)
			}
		}
	}
	return out
}

// writeRejected writes the rejected entries of kinds.
func writeRejected(w io.Writer, r composition.ServerStatus, kinds ...ports.ListKind) {
	for _, rj := range rejectedOf(r, kinds...) {
		fmt.Fprintf(w, "  rejected %s %s: %s\n", rj.Kind, termsafe.Line(rj.Name), termsafe.Line(rj.Reason))
	}
}

// Indent starts every line of a result's text but the first.
const Indent = "  "

// writeLines writes lines, every one but the first indented (an empty line
// stays empty), so no line of a server's text passes for mcpward's own.
func writeLines(w io.Writer, lines []string) {
	for i, l := range lines {
		if i > 0 && l != "" {
			l = Indent + l
		}
		fmt.Fprintln(w, l)
	}
}

// contentLines is the text of one content block for people: a text
// block's text escaped (termsafe.Text), an embedded text resource's text,
// else a placeholder.
func contentLines(raw json.RawMessage) []string {
	var it struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Resource *struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"resource"`
	}
	if json.Unmarshal(raw, &it) != nil {
		return []string{"[unreadable content]"}
	}
	switch {
	case it.Type == "text":
		return strings.Split(termsafe.Text(it.Text), "\n")
	case it.Type == "resource" && it.Resource != nil && it.Resource.Text != "":
		return append([]string{"[resource " + termsafe.Line(it.Resource.URI) + "]"}, strings.Split(termsafe.Text(it.Resource.Text), "\n")...)
	}
	return []string{"[" + termsafe.Line(it.Type) + " content]"}
}

// Completion is the --json output of --complete.
type Completion struct {
	Server   string   `json:"server"`
	Argument string   `json:"argument"`
	Values   []string `json:"values"`
	Total    int      `json:"total"`
	HasMore  bool     `json:"has_more"`
}

// CompleteArgs splits --args for --complete ARG: the value typed so far
// (args[ARG], "" when absent) and the other arguments as context.
func CompleteArgs(args map[string]string, arg string) (value string, resolved map[string]string) {
	for k, v := range args {
		if k == arg {
			value = v
			continue
		}
		if resolved == nil {
			resolved = map[string]string{}
		}
		resolved[k] = v
	}
	return value, resolved
}

// WriteCompletion writes the completion values, one per line, made safe,
// and a last line "…" when the server has more.
func WriteCompletion(w io.Writer, c ports.Completion) {
	for _, v := range c.Values {
		fmt.Fprintln(w, termsafe.Line(v))
	}
	if c.HasMore {
		fmt.Fprintln(w, "…")
	}
}

// ToCompletion returns --complete's --json shape.
func ToCompletion(server, arg string, c ports.Completion) Completion {
	vals := c.Values
	if vals == nil {
		vals = []string{}
	}
	return Completion{Server: server, Argument: arg, Values: vals, Total: c.Total, HasMore: c.HasMore}
}
