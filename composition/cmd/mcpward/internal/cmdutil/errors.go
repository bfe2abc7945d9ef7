package cmdutil

import (
	"errors"
	"fmt"
)

// Exit codes of the CLI.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// FlagError is a usage error: a bad flag, a wrong argument count, an
// unknown command. The CLI prints it with a pointer to the command's help
// and exits ExitUsage. Its text never holds a flag's value (a value may be
// a secret typed in the wrong place).
type FlagError struct{ msg string }

// Error returns the message.
func (e *FlagError) Error() string { return e.msg }

// FlagErrorf returns a *FlagError with a formatted message.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{msg: fmt.Sprintf(format, args...)}
}

// ErrSilent ends a command that has already reported its failure (its
// output says what failed): the CLI exits ExitFailure and prints nothing
// more.
var ErrSilent = errors.New("silent failure")

// ErrCancelled ends a command whose context ended (an interrupt): the CLI
// prints nothing more; the signal decides the exit code.
var ErrCancelled = errors.New("cancelled")

// IsUsage reports whether err is a usage error.
func IsUsage(err error) bool {
	var fe *FlagError
	return errors.As(err, &fe)
}

// NotedError is Err with a line the CLI prints after it, on stderr (for
// example how long a timed-out operation ran).
type NotedError struct {
	Err  error
	Note string
	// Hint, when set, is printed on a line of its own after Note
	// ("mcpward: hint: …"): the one command that explains the failure.
	Hint string
}

// Error returns Err's text.
func (e *NotedError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *NotedError) Unwrap() error { return e.Err }
