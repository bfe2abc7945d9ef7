package composition_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/memory"
)

// A host of three servers, as README "Embedding the library" shows it:
// two from the user's configuration (the host's own trust) and one from
// the project, which runs only once the user approved it; the live tool
// set, typed results, progress, elicitation, and failures the host and
// its model can branch on. A real host reads the configuration from its
// files; here it names the example server of examples/server, and a
// program that is not installed.
func Example() {
	ctx := context.Background()
	workspace, _ := os.Getwd()                            // the repository the user opened
	host, cleanup, err := memory.Open(ctx, memory.Config{ // or headless.Open(ctx, headless.Config{Dir: stateDir, ...})
		Trust: composition.GitWorkspace(workspace, nil), // project approvals bind this repository
		Config: composition.Config{
			Lookup:    os.LookupEnv,                           // ${VAR} in definitions: mcpward never reads the environment itself
			Authority: composition.NewEnvAuthority(workspace), // who may spawn stdio servers, with which environment
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	srcs := []composition.Source{
		{Tier: composition.TierUser, Origin: "~/.config/myagent/mcp.json", Data: userConfig()},
		{Tier: composition.TierProject, Origin: ".mcp.json", Data: projectConfig()},
	}

	// A project server runs only once the user approved what it runs.
	for _, s := range host.Evaluate(ctx, srcs).Servers {
		if s.NeedsApproval() && askUser(s) {
			if _, err := host.Approve(ctx, srcs, s.Name); err != nil {
				log.Fatal(err)
			}
		}
	}
	fleet := host.Connect(ctx, srcs, &composition.ConnectOptions{
		Elicitation: &composition.ElicitationOptions{Elicitor: composition.ElicitDefaults()}, // a real host asks the user
	})
	defer fleet.Close()
	for _, s := range fleet.Servers() {
		if s.State != composition.StateConnected {
			fmt.Println(s.Name, s.State, s.Reason) // a reason word (and s.Class) for every server not connected
			continue
		}
		fmt.Println(s.Name, s.State, len(s.Tools), "tools")
	}

	// The model's turn: it is offered the live set, and calls tools by the
	// names it was offered (fleet.Current().Changed says when to offer anew).
	tools := fleet.Current().Set.ModelTools() // []composition.Tool: name, description, schema, annotations
	fmt.Println(len(tools), "tools offered")
	for _, call := range []struct{ tool, args string }{
		{"mcp__calc__add", `{"a": 2, "b": 3}`},
		{"mcp__notes__word_count", `{"text": "one two three"}`},
		{"mcp__calc__add", `{"a": "two"}`},
		{"mcp__tickets__create", `{}`},
	} {
		progress := func(p composition.Progress) {} // asks the server for progress; shown as p.Progress of p.Total
		res, err := fleet.CallHostTool(composition.WithProgress(ctx, progress), call.tool, json.RawMessage(call.args))
		var e *composition.Error
		switch {
		case errors.As(err, &e) && e.Reason == composition.ReasonServerUnavailable:
			fmt.Println(call.tool, "-> server down:", e.Server) // tell the model; fleet.Reconnect once fixed
		case err != nil:
			fmt.Println(call.tool, "->", composition.ClassOf(err), composition.ReasonOf(err)) // the model reads it, tries again
		default:
			fmt.Println(call.tool, "->", res.Blocks[0].Text, string(res.StructuredContent)) // typed blocks, checked structured content
		}
	}
	// Output:
	// calc connected 4 tools
	// notes connected 4 tools
	// tickets failed program_not_found
	// 8 tools offered
	// mcp__calc__add -> 5 {"sum":5}
	// mcp__notes__word_count -> 3 {"words":3}
	// mcp__calc__add -> config invalid_arguments
	// mcp__tickets__create -> server down: tickets
}

// askUser stands for the host's approval prompt: it shows what the
// project's server runs (s.Projection: program, arguments, where it
// connects; s.ApprovalChanged says it changed since approved) and returns
// the user's answer.
func askUser(s composition.ServerEvaluation) bool { return s.Projection != nil }

// userConfig is the user's configuration of Example: the example server,
// and a program that is not installed.
func userConfig() []byte {
	return []byte(`{"mcpServers": {"calc": {"command": ` + exampleServer() + `}, "tickets": {"command": "mcp-tickets-not-installed"}}}`)
}

// projectConfig is the project's configuration of Example.
func projectConfig() []byte {
	return []byte(`{"mcpServers": {"notes": {"command": ` + exampleServer() + `}}}`)
}

// exampleServer builds the example MCP server of examples/server (once)
// and returns its path as a JSON string.
func exampleServer() string {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("composition-example-%d", os.Getpid())) // TestMain removes it
	bin := filepath.Join(dir, "example-server")
	if _, err := os.Stat(bin); err != nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			log.Fatal(err)
		}
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir = filepath.Join("..", "examples", "server")
		if out, err := cmd.CombinedOutput(); err != nil {
			log.Fatalf("building the example server: %v\n%s", err, out)
		}
	}
	q, _ := json.Marshal(bin)
	return string(q)
}
