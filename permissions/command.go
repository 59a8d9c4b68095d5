package permissions

import "github.com/massgen-go/massgen/permissions/shellcmd"

// Commands are analysed by permissions/shellcmd; its errors and bounds under the names the
// decisions use.
var (
	errTooLarge  = shellcmd.ErrTooLarge  // refused because checking it would cost too much
	errDangerous = shellcmd.ErrDangerous // refused whatever the permissions
)

const maxCommandWords = shellcmd.MaxWords
