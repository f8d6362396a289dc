@testable import WebSocketProtocol

/// Builds raw frame bytes by hand, including shapes our encoder never produces (non-minimal
/// lengths, reserved bits, bad opcodes), so the decoder is tested against the wire format
/// rather than against our own encoder.
func rawFrame(fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, payload: [UInt8] = [],
              mask: MaskingKey? = nil, lengthEncoding: Int? = nil, declaredLength: UInt64? = nil) -> [UInt8] {
    var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv << 4) | opcode]
    let length = declaredLength ?? UInt64(payload.count)
    let maskBit: UInt8 = mask == nil ? 0 : 0x80
    let encoding = lengthEncoding ?? (length <= 125 ? 7 : length <= 0xFFFF ? 16 : 64)
    switch encoding {
    case 7: bytes.append(maskBit | UInt8(length))
    case 16: bytes.append(maskBit | 126); bytes += [UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
    default:
        bytes.append(maskBit | 127)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(length >> UInt64(shift) & 0xFF)) }
    }
    var body = payload
    if let mask {
        bytes += [mask[0], mask[1], mask[2], mask[3]]
        for index in body.indices { body[index] ^= mask[index % 4] }
    }
    return bytes + body
}

let testKey = MaskingKey(0x37, 0xFA, 0x21, 0x3D)
