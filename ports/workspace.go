package ports

import "context"

// WorkspaceFacts are facts only the host can decide about the workspace a
// project, local or plugin definition came from.
type WorkspaceFacts struct {
	// Trusted is the host's decision that the workspace is trusted.
	Trusted bool
	// Repository identifies the repository (for example its canonical
	// remote URL); "" when unknown, which matches no approval.
	Repository string
	// Generation changes whenever the host considers the workspace's trust
	// state renewed (for example a trust re-prompt); "" when unknown.
	Generation string
}

// WorkspaceTrust supplies WorkspaceFacts. Safe for concurrent use.
type WorkspaceTrust interface {
	// Facts returns the current facts, or a *refusal.Error (Class Transient
	// or Internal) when the host cannot tell; a failure denies activation.
	Facts(ctx context.Context) (WorkspaceFacts, error)
}
