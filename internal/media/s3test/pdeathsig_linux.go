package s3test

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal has the kernel kill the server when the test binary dies, so that a
// test killed by a timeout leaves no SeaweedFS behind.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
