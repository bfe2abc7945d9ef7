// Package headless is the deployment profile of a machine without a
// keychain (servers, CI, containers): tokens, approvals, audit and locks
// all on files under a state directory. A program that imports it (and
// not desktop or shared) links neither the OS keychain and D-Bus code nor
// the PostgreSQL driver.
//
// The state directory's layout:
//
//	<dir>/               0700, created when missing (with its parents)
//	  store/             the filestore: approvals.json, audit.jsonl,
//	                     locks/, tokens/
//
// Other entries of the directory belong to the host (the mcpward CLI keeps
// its workspace generations in workspaces/).
package headless

// StoreSubdir is the subdirectory of the state directory holding the
// filestore.
const StoreSubdir = "store"

// ReasonStateDirUnusable is the reason of the refusal (Class Config) New
// returns when the state directory cannot be used (it cannot be created,
// or the filestore refuses it: a symlink, not owned by the user, open to
// group or others); its Detail names the filestore's reason, never the
// path.
const ReasonStateDirUnusable = "state_dir_unusable"
