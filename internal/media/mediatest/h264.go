package mediatest

// A minimal H.264 (constrained baseline, CAVLC) encoder for a flat grey picture: the first
// frame is an IDR whose every macroblock is Intra16x16 DC prediction with no residual, each
// later frame is a P frame that skips every macroblock. That is enough for a decoder to
// produce real frames, which keeps tools such as ffprobe/ffmpeg quiet when tests feed them
// these files.

// bitWriter writes an RBSP most-significant bit first.
type bitWriter struct {
	buf  []byte
	cur  byte
	nbit uint
}

func (b *bitWriter) bit(v uint32) {
	b.cur = b.cur<<1 | byte(v&1)
	b.nbit++
	if b.nbit == 8 {
		b.buf = append(b.buf, b.cur)
		b.cur, b.nbit = 0, 0
	}
}

// u writes v in n bits.
func (b *bitWriter) u(n int, v uint32) {
	for i := n - 1; i >= 0; i-- {
		b.bit(v >> uint(i))
	}
}

// ue writes v as unsigned Exp-Golomb.
func (b *bitWriter) ue(v uint32) {
	x := v + 1
	n := 0
	for t := x; t > 1; t >>= 1 {
		n++
	}
	b.u(n, 0)
	b.u(n+1, x)
}

// se writes v as signed Exp-Golomb.
func (b *bitWriter) se(v int32) {
	if v > 0 {
		b.ue(uint32(2*v - 1))
	} else {
		b.ue(uint32(-2 * v))
	}
}

// trailing writes rbsp_trailing_bits and returns the RBSP.
func (b *bitWriter) trailing() []byte {
	b.bit(1)
	for b.nbit != 0 {
		b.bit(0)
	}
	return b.buf
}

// nal builds a NAL unit from its header byte and RBSP, inserting emulation-prevention bytes
// so that no start code appears inside the payload.
func nal(header byte, rbsp []byte) []byte {
	out := make([]byte, 0, len(rbsp)+len(rbsp)/64+1)
	out = append(out, header)
	zeros := 0
	for _, c := range rbsp {
		if zeros >= 2 && c <= 3 {
			out = append(out, 3)
			zeros = 0
		}
		out = append(out, c)
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return out
}

const (
	h264Profile     = 66   // baseline
	h264Constraints = 0xC0 // constraint_set0 and set1: constrained baseline
)

type h264Stream struct {
	sps, pps []byte
	level    byte
	mbs      int
}

func newH264(width, height int) *h264Stream {
	mbw, mbh := (width+15)/16, (height+15)/16
	s := &h264Stream{mbs: mbw * mbh}
	switch {
	case s.mbs <= 1620:
		s.level = 30
	case s.mbs <= 3600:
		s.level = 31
	case s.mbs <= 8192:
		s.level = 40
	default:
		s.level = 51
	}

	var b bitWriter
	b.u(8, h264Profile)
	b.u(8, h264Constraints)
	b.u(8, uint32(s.level))
	b.ue(0) // seq_parameter_set_id
	b.ue(0) // log2_max_frame_num_minus4: frame_num has 4 bits
	b.ue(2) // pic_order_cnt_type 2: output order is decoding order
	b.ue(1) // max_num_ref_frames
	b.u(1, 0)
	b.ue(uint32(mbw - 1))
	b.ue(uint32(mbh - 1))
	b.u(1, 1)                                           // frame_mbs_only_flag
	b.u(1, 1)                                           // direct_8x8_inference_flag
	cropR, cropB := (mbw*16-width)/2, (mbh*16-height)/2 // 4:2:0 crop units are 2 pixels
	if cropR > 0 || cropB > 0 {
		b.u(1, 1)
		b.ue(0)
		b.ue(uint32(cropR))
		b.ue(0)
		b.ue(uint32(cropB))
	} else {
		b.u(1, 0)
	}
	b.u(1, 0) // vui_parameters_present_flag
	s.sps = nal(0x67, b.trailing())

	var p bitWriter
	p.ue(0)   // pic_parameter_set_id
	p.ue(0)   // seq_parameter_set_id
	p.u(1, 0) // entropy_coding_mode_flag: CAVLC
	p.u(1, 0) // bottom_field_pic_order_in_frame_present_flag
	p.ue(0)   // num_slice_groups_minus1
	p.ue(0)   // num_ref_idx_l0_default_active_minus1
	p.ue(0)   // num_ref_idx_l1_default_active_minus1
	p.u(1, 0) // weighted_pred_flag
	p.u(2, 0) // weighted_bipred_idc
	p.se(0)   // pic_init_qp_minus26
	p.se(0)   // pic_init_qs_minus26
	p.se(0)   // chroma_qp_index_offset
	p.u(1, 0) // deblocking_filter_control_present_flag
	p.u(1, 0) // constrained_intra_pred_flag
	p.u(1, 0) // redundant_pic_cnt_present_flag
	s.pps = nal(0x68, p.trailing())
	return s
}

// avcC returns the AVCDecoderConfigurationRecord.
func (s *h264Stream) avcC() []byte {
	out := []byte{1, h264Profile, h264Constraints, s.level, 0xFF, 0xE1}
	out = append(out, byte(len(s.sps)>>8), byte(len(s.sps)))
	out = append(out, s.sps...)
	out = append(out, 1, byte(len(s.pps)>>8), byte(len(s.pps)))
	out = append(out, s.pps...)
	return out
}

// frame returns frame i as a length-prefixed (AVCC) sample.
func (s *h264Stream) frame(i int) []byte {
	var b bitWriter
	var header byte
	b.ue(0) // first_mb_in_slice
	if i == 0 {
		header = 0x65 // nal_ref_idc 3, IDR slice
		b.ue(7)       // slice_type: I, all slices
		b.ue(0)       // pic_parameter_set_id
		b.u(4, 0)     // frame_num
		b.ue(0)       // idr_pic_id
		b.u(1, 0)     // no_output_of_prior_pics_flag
		b.u(1, 0)     // long_term_reference_flag
		b.se(0)       // slice_qp_delta
		for m := 0; m < s.mbs; m++ {
			b.ue(3)   // mb_type I_16x16_2_0_0: DC prediction, no coded residual
			b.ue(0)   // intra_chroma_pred_mode: DC
			b.se(0)   // mb_qp_delta
			b.u(1, 1) // coeff_token of Intra16x16DCLevel: no coefficients
		}
	} else {
		header = 0x41        // nal_ref_idc 2, non-IDR slice; every frame is a reference so POC type 2 stays legal
		b.ue(5)              // slice_type: P, all slices
		b.ue(0)              // pic_parameter_set_id
		b.u(4, uint32(i%16)) // frame_num
		b.u(1, 0)            // num_ref_idx_active_override_flag
		b.u(1, 0)            // ref_pic_list_modification_flag_l0
		b.u(1, 0)            // adaptive_ref_pic_marking_mode_flag
		b.se(0)              // slice_qp_delta
		b.ue(uint32(s.mbs))  // mb_skip_run: every macroblock
	}
	n := nal(header, b.trailing())
	out := make([]byte, 4, 4+len(n))
	out[0], out[1], out[2], out[3] = byte(len(n)>>24), byte(len(n)>>16), byte(len(n)>>8), byte(len(n))
	return append(out, n...)
}
