package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Memory is a process's resident memory as Linux reports it in /proc/<pid>/status, in MB
// (10^6 bytes; the file counts KiB).
type Memory struct {
	// RSSMB is VmRSS, the resident set now; HWMMB is VmHWM, its peak ("high water mark")
	// since the process started.
	RSSMB float64
	HWMMB float64
}

// ReadMemory reads the memory of process pid from /proc (Linux only).
func ReadMemory(pid int) (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	return parseStatus(b)
}

// parseStatus reads VmRSS and VmHWM ("VmHWM:\t  123456 kB") from a /proc/<pid>/status file.
func parseStatus(b []byte) (Memory, error) {
	var m Memory
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return m, fmt.Errorf("unexpected %s line %q", name, sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return m, fmt.Errorf("%s: %w", name, err)
		}
		mb := math.Round(float64(kb)*1024/1e5) / 10
		if name == "VmRSS" {
			m.RSSMB = mb
		} else {
			m.HWMMB = mb
		}
		found++
	}
	if found != 2 {
		return m, fmt.Errorf("no VmRSS and VmHWM in the process status")
	}
	return m, nil
}
