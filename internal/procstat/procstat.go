// Package procstat reads what Linux's /proc says of a process's CPU time and memory and of the
// machine's CPU time, for the benchmarks' figures.
package procstat

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

// userHZ is the unit of the times in /proc/<pid>/stat: USER_HZ, 100 on every Linux
// architecture Go supports.
const userHZ = 100

// ReadCPU reads the CPU time (user plus system) process pid has used so far, in seconds, from
// /proc (Linux only).
func ReadCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStat(b)
}

// parseStat reads utime and stime, fields 14 and 15 of a /proc/<pid>/stat line. The command
// name (field 2) is in parentheses and may hold spaces or parentheses itself, so the fields
// are counted from after its last ")".
func parseStat(b []byte) (float64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected process stat %q", b)
	}
	fields := strings.Fields(string(b[i+1:]))
	// After the name come state (field 3) and the rest: utime is field 14, at index 11 here.
	if len(fields) < 13 {
		return 0, fmt.Errorf("process stat has %d fields after the name", len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("process stat: %w", err)
		}
		ticks += n
	}
	return float64(ticks) / userHZ, nil
}

// ReadMachineCPU reads the time all CPUs of the machine have spent busy so far, in seconds,
// from /proc/stat (Linux only): every kind of time on its first line but idle and iowait.
func ReadMachineCPU() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseMachineStat(b)
}

// parseMachineStat reads the first line of /proc/stat: "cpu" and the ticks spent in user,
// nice, system, idle, iowait, irq, softirq, steal (and, on newer kernels, guest times, which
// user and nice already include: they are left out).
func parseMachineStat(b []byte) (float64, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, fmt.Errorf("unexpected machine stat %q", line)
	}
	var busy int64
	for i, f := range fields[1:min(len(fields), 9)] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("machine stat: %w", err)
		}
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return float64(busy) / userHZ, nil
}
