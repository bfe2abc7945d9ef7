package anthropicbridge_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/anthropics/anthropic-sdk-go/v2"

	anthropicbridge "github.com/mcpward/mcpward/bridges/anthropic"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/memory"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// An agent loop: offer the Fleet's live tools with every request, run the
// tool_use blocks of each reply (asking the host before a tool the server
// does not call read-only), answer with their tool_result blocks, and
// stop when the model uses no tool. It needs ANTHROPIC_API_KEY.
func Example() {
	ctx := context.Background()
	wd, _ := os.Getwd()
	host, cleanup, err := memory.Open(ctx, memory.Config{Config: composition.Config{Lookup: os.LookupEnv, Authority: composition.NewEnvAuthority(wd)}})
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	config, _ := os.ReadFile("mcp.json")
	fleet := host.Connect(ctx, []definition.Source{{Tier: ports.TierUser, Origin: "mcp.json", Data: config}}, nil)
	defer fleet.Close()

	opts := &anthropicbridge.Options{Confirm: func(ctx context.Context, c anthropicbridge.Call) error {
		if a := c.Spec.Annotations; a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint {
			return nil // the server's word, trusted here: see Options.Confirm
		}
		return askUser(ctx, c.Name)
	}}
	client := anthropic.NewClient() // ANTHROPIC_API_KEY from the environment
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is 2 + 3?"))}
	for {
		tools := fleet.Current().Set.ModelTools() // the live set, read again every turn
		reply, err := client.Messages.New(ctx, anthropic.MessageNewParams{
			Model: anthropic.ModelClaudeSonnet4_6, MaxTokens: 1024, Messages: msgs,
			Tools: anthropicbridge.Tools(tools, opts),
		})
		if err != nil {
			log.Fatal(err)
		}
		msgs = append(msgs, reply.ToParam())
		results, err := anthropicbridge.Dispatch(ctx, tools, reply, opts)
		if err != nil {
			log.Fatal(err) // ctx ended
		}
		if len(results) == 0 {
			return // no tool use: the model's answer is in reply.Content
		}
		msgs = append(msgs, anthropic.NewUserMessage(results...))
	}
}

// The SDK's own tool runner drives the loop: BetaTools gives it the
// Fleet's tools under their host-facing names, with the host's
// confirmation and bounds; the runner answers every tool_use until the
// model stops.
func ExampleBetaTools() {
	ctx := context.Background()
	var fleet *composition.Fleet // connected as in the package example
	client := anthropic.NewClient()
	opts := &anthropicbridge.Options{Confirm: func(ctx context.Context, c anthropicbridge.Call) error { return askUser(ctx, c.Name) }}
	runner := client.Beta.Messages.NewToolRunner(anthropicbridge.BetaTools(fleet.Current().Set.ModelTools(), opts),
		anthropic.BetaToolRunnerParams{BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model: anthropic.ModelClaudeSonnet4_6, MaxTokens: 1024,
			Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("What is 2 + 3?"))},
		}})
	final, err := runner.RunToCompletion(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range final.Content {
		if b.Type == "text" {
			fmt.Println(b.Text)
		}
	}
}

// askUser stands for the host's own confirmation prompt.
func askUser(_ context.Context, tool string) error {
	return errors.New("declined " + tool)
}
