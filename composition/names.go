package composition

import (
	"context"

	"github.com/mcpward/mcpward/core/activation"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// The names a host needs, from the packages that define them, so a host
// imports composition and its profile and little else. Each is the same
// type, value or function as its origin (an alias, not a copy): code
// that imports the origin package works with them unchanged.

// Sources and tiers: what a host hands Evaluate, Connect and Approve.
type (
	// Source is the bytes of one configuration file the host read, tagged
	// with its tier and origin (definition.Source).
	Source = definition.Source
	// Tier is the trust level of a source, highest first: managed, local,
	// project, user, plugin (ports.Tier).
	Tier = ports.Tier
)

// The tiers (ports.Tier*). Servers of the managed and user tiers are the
// host's own trust and need no approval; local, project and plugin ones
// need Host.Approve (see ServerEvaluation.NeedsApproval).
const (
	TierManaged = ports.TierManaged
	TierLocal   = ports.TierLocal
	TierProject = ports.TierProject
	TierUser    = ports.TierUser
	TierPlugin  = ports.TierPlugin
)

// Tools and their results: what a host offers its model and gets back.
type (
	// Tool is the host's generic tool slot (ports.Tool): every tool of a
	// Fleet's Set, as Generation.Set.ModelTools lists them.
	Tool = ports.Tool
	// ToolSpec is what a model sees of a tool (ports.ToolSpec).
	ToolSpec = ports.ToolSpec
	// ToolAnnotations are a server's hints about a tool, never a grant
	// (ports.ToolAnnotations).
	ToolAnnotations = ports.ToolAnnotations
	// ToolResult is a tool call's result (ports.ToolResult).
	ToolResult = ports.ToolResult
	// ContentBlock is one typed block of a result (ports.ContentBlock).
	ContentBlock = ports.ContentBlock
	// ContentKind is a ContentBlock's type (ports.ContentKind).
	ContentKind = ports.ContentKind
)

// The kinds of content blocks (ports.Content*).
const (
	ContentText         = ports.ContentText
	ContentImage        = ports.ContentImage
	ContentAudio        = ports.ContentAudio
	ContentResourceLink = ports.ContentResourceLink
	ContentResource     = ports.ContentResource
)

// ToolName returns the host-facing name of the tool named tool on the
// server named server (catalog.ToolName): the name a model sees and
// Fleet.CallHostTool takes.
func ToolName(server, tool string) string { return catalog.ToolName(server, tool) }

// Progress is one progress notification of a call (ports.Progress).
type Progress = ports.Progress

// WithProgress returns a context carrying f, the progress callback of the
// one tool call made with it (ports.WithProgress): only such a call asks
// the server for progress, and each notification restarts its
// CallTimeout window.
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	return ports.WithProgress(ctx, f)
}

// Elicitation: a server asking the user mid-call (see ElicitationOptions).
type (
	// Elicitor answers a server's questions (ports.Elicitor).
	Elicitor = ports.Elicitor
	// ElicitorFunc is an Elicitor of one function (ports.ElicitorFunc).
	ElicitorFunc = ports.ElicitorFunc
	// ElicitRequest is one question (ports.ElicitRequest).
	ElicitRequest = ports.ElicitRequest
	// ElicitResult is the user's answer (ports.ElicitResult).
	ElicitResult = ports.ElicitResult
	// ElicitAction is what the user did (ports.ElicitAction).
	ElicitAction = ports.ElicitAction
)

// The answers to a question (ports.ElicitAccept, ports.ElicitDecline,
// ports.ElicitCancel; ElicitDefaults and ElicitDecline are ready
// Elicitors).
const (
	ElicitActionAccept  = ports.ElicitAccept
	ElicitActionDecline = ports.ElicitDecline
	ElicitActionCancel  = ports.ElicitCancel
)

// Workspace trust: the facts approvals of project servers bind (see
// GitWorkspace, StaticTrust).
type (
	// WorkspaceTrust supplies WorkspaceFacts (ports.WorkspaceTrust).
	WorkspaceTrust = ports.WorkspaceTrust
	// WorkspaceFacts are the facts only the host decides
	// (ports.WorkspaceFacts).
	WorkspaceFacts = ports.WorkspaceFacts
)

// Errors: every failure mcpward reports is a *Error (refusal.Error): a
// Class to branch on and a stable Reason word, never a secret.
type (
	// Error is mcpward's typed, secret-free error (refusal.Error).
	Error = refusal.Error
	// Class is what a host branches on (refusal.Class).
	Class = refusal.Class
)

// The classes (refusal.*): ClassTransient may pass if retried,
// ClassAuthRequired needs a sign-in, ClassAuthRefused a credential the
// server refused, ClassRefused is a policy's no, ClassUnsupported
// something this version does not do, ClassProtocol a peer that broke the
// protocol, ClassConfig the host's input, ClassInternal a bug in mcpward;
// ClassNone is a status without a failure.
const (
	ClassInternal     = refusal.Internal
	ClassTransient    = refusal.Transient
	ClassAuthRequired = refusal.AuthRequired
	ClassAuthRefused  = refusal.AuthRefused
	ClassRefused      = refusal.Refused
	ClassUnsupported  = refusal.Unsupported
	ClassProtocol     = refusal.Protocol
	ClassConfig       = refusal.Config
	ClassNone         = refusal.None
)

// ClassOf returns err's Class (refusal.ClassOf): Internal for an error
// that is not a *Error.
func ClassOf(err error) Class { return refusal.ClassOf(err) }

// ReasonOf returns the Reason word of the first *Error in err's chain
// (refusal.ReasonOf), "" when there is none.
func ReasonOf(err error) string { return refusal.ReasonOf(err) }

// The reasons a host branches on, besides this package's own (Reason*
// constants of Host, Fleet and the profiles), from the packages that
// define them.
const (
	// ReasonNotApproved: a project, local or plugin server without an
	// approval (activation.ReasonNotApproved; see NeedsApproval).
	ReasonNotApproved = activation.ReasonNotApproved
	// ReasonApprovalChanged: approved once, changed since
	// (activation.ReasonIdentityChanged; see ApprovalChanged).
	ReasonApprovalChanged = activation.ReasonIdentityChanged
	// ReasonWorkspaceUntrusted: the definition requires a trusted
	// workspace (activation.ReasonWorkspaceUntrusted; see
	// NeedsTrustedWorkspace).
	ReasonWorkspaceUntrusted = activation.ReasonWorkspaceUntrusted
	// ReasonRepositoryUnknown: no approval can be bound, the workspace's
	// repository is unknown (activation.ReasonRepositoryUnknown): give the
	// profile a Trust (GitWorkspace).
	ReasonRepositoryUnknown = activation.ReasonRepositoryUnknown
	// ReasonApprovalNotNeeded: Approve of a managed or user server
	// (activation.ReasonApprovalNotNeeded).
	ReasonApprovalNotNeeded = activation.ReasonApprovalNotNeeded
	// ReasonUnsetVariable: the definition names a variable Lookup does not
	// set (definition.ReasonUnsetVariable; see NeedsVariables).
	ReasonUnsetVariable = definition.ReasonUnsetVariable
	// ReasonInvalidArguments: a call's arguments do not match the tool's
	// schema; nothing was sent (catalog.ReasonInvalidArguments; the error
	// is a *catalog.ArgumentError saying what was expected).
	ReasonInvalidArguments = catalog.ReasonInvalidArguments
	// ReasonToolChanged and ReasonToolRemoved: a tool of an older
	// generation whose server changed or dropped it; nothing was sent
	// (catalog.ReasonToolChanged, catalog.ReasonToolRemoved): read the
	// current Set.
	ReasonToolChanged = catalog.ReasonToolChanged
	ReasonToolRemoved = catalog.ReasonToolRemoved
	// ReasonCallTimeout: a call outlived its CallTimeout or
	// CallTimeoutMax, abandoned, never replayed
	// (supervisor.ReasonCallTimeout).
	ReasonCallTimeout = supervisor.ReasonCallTimeout
)
