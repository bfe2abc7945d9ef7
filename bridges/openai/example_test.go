package openaibridge_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	openaibridge "github.com/mcpward/mcpward/bridges/openai"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/memory"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// An agent loop over Chat Completions: offer the Fleet's live tools with
// every request, run the tool calls of each reply (asking the host
// before a tool the server does not call read-only), answer with one
// tool message per call, and stop when the model calls no tool. It needs
// OPENAI_API_KEY.
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

	opts := &openaibridge.Options{Confirm: func(ctx context.Context, c openaibridge.Call) error {
		if a := c.Spec.Annotations; a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint {
			return nil // the server's word, trusted here: see Options.Confirm
		}
		return askUser(ctx, c.Name)
	}}
	client := openai.NewClient() // OPENAI_API_KEY from the environment
	msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is 2 + 3?")}
	for {
		tools := fleet.Current().Set.ModelTools() // the live set, read again every turn
		completion, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: openai.ChatModelGPT4_1, Messages: msgs, Tools: openaibridge.Tools(tools, opts),
		})
		if err != nil {
			log.Fatal(err)
		}
		reply := completion.Choices[0].Message
		msgs = append(msgs, reply.ToParam())
		results, err := openaibridge.Dispatch(ctx, tools, &reply, opts)
		if err != nil {
			log.Fatal(err) // ctx ended
		}
		if len(results) == 0 {
			return // no tool call: the model's answer is reply.Content
		}
		msgs = append(msgs, results...)
	}
}

// The same loop over the Responses API: each function_call_output goes
// into the next request, chained to the previous response.
func ExampleDispatchResponse() {
	ctx := context.Background()
	var fleet *composition.Fleet // connected as in the package example
	client := openai.NewClient()
	params := responses.ResponseNewParams{Model: openai.ChatModelGPT4_1,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is 2 + 3?")}}
	for {
		tools := fleet.Current().Set.ModelTools()
		params.Tools = openaibridge.ResponseTools(tools, nil)
		resp, err := client.Responses.New(ctx, params)
		if err != nil {
			log.Fatal(err)
		}
		items, err := openaibridge.DispatchResponse(ctx, tools, resp, nil)
		if err != nil {
			log.Fatal(err)
		}
		if len(items) == 0 {
			return // the answer is resp.OutputText()
		}
		params.PreviousResponseID = openai.String(resp.ID)
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	}
}

// The SDK's own runner of the Agents API: the tools go into the
// session's agent, their handlers into its event stream; the runner
// answers each function call through the handlers (Confirm first, at most
// MaxParallel at once) while the turn's events stream.
func ExampleAgentToolHandlers() {
	ctx := context.Background()
	var fleet *composition.Fleet // connected as in the package example
	client := openai.NewClient()
	tools := fleet.Current().Set.ModelTools()
	opts := &openaibridge.Options{Confirm: func(ctx context.Context, c openaibridge.Call) error { return askUser(ctx, c.Name) }}
	none := openai.NewEnvironmentParamNone()
	stream := client.Beta.Agents.Sessions.NewStreaming(ctx, openai.BetaAgentSessionNewParams{
		Environment:  openai.EnvironmentParamUnion{OfParamNone: &none},
		Agent:        openai.BetaAgentSessionNewParamsAgent{Model: openai.String("gpt-5"), Tools: openaibridge.AgentTools(tools, opts)},
		Input:        openai.BetaAgentSessionNewParamsInputUnion{OfString: openai.String("What is 2 + 3?")},
		ToolHandlers: openaibridge.AgentToolHandlers(tools, opts),
	})
	defer stream.Close()
	for stream.Next() {
		if e := stream.Current(); e.Type == "agent.session.turn.output_text.delta" {
			fmt.Print(e.AsAgentSessionTurnOutputTextDelta().Delta)
		}
	}
	if err := stream.Err(); err != nil {
		log.Fatal(err)
	}
}

// askUser stands for the host's own confirmation prompt.
func askUser(_ context.Context, tool string) error {
	return errors.New("declined " + tool)
}
