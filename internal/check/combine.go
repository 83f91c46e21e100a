package check

// CRC-32 combination: the sum of a chunk from the sums of its parts, without
// reading the bytes again (zlib's crc32_combine, in the reflected
// representation hash/crc32 uses). The flow check uses it to take a pull
// chunk's source sum from the send buffer's block sums at post.

// poly is the IEEE polynomial, reflected.
const poly = 0xedb88320

// mulModP is a·b modulo the polynomial (reflected: bit 31 is x^0).
func mulModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ poly
		} else {
			b >>= 1
		}
	}
	return p
}

// x2n[k] is x^(2^k) modulo the polynomial.
var x2n = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = mulModP(p, p)
	}
	return t
}()

// xPow8 is x^(8n) modulo the polynomial: the factor that moves a sum past n
// bytes.
func xPow8(n uint64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = mulModP(x2n[k&31], p)
		}
	}
	return p
}

// blockShift[i][v] is (v << 8i)·x^(8·BlockSize): the factor of a full block,
// a byte of the sum at a time (mulModP is linear in its second argument).
var blockShift = func() (t [4][256]uint32) {
	f := xPow8(BlockSize)
	for i := range t {
		for v := range 256 {
			t[i][v] = mulModP(f, uint32(v)<<(8*i))
		}
	}
	return t
}()

// Combine is the Sum of a followed by b, given crc1 = Sum(a), crc2 = Sum(b)
// and n2 = len(b) (Update(crc1, b) without b's bytes).
func Combine(crc1, crc2 uint32, n2 int) uint32 {
	if n2 == BlockSize {
		return blockShift[0][crc1&0xff] ^ blockShift[1][crc1>>8&0xff] ^ blockShift[2][crc1>>16&0xff] ^ blockShift[3][crc1>>24] ^ crc2
	}
	return mulModP(xPow8(uint64(n2)), crc1) ^ crc2
}
