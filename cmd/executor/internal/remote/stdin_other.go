//go:build !unix

package remote

import "os"

// pollableStdin: stdin is read as is (a blocked read cannot be interrupted).
func pollableStdin(*os.File) (stdinSource, bool) { return stdinSource{}, false }
