// The text forms of IP addresses, both ways. Parsing walks the bytes once, left to right.

enum IPAddressText {
    static let colon = UInt8(ascii: ":")
    static let dot = UInt8(ascii: ".")

    static func parse(_ bytes: ArraySlice<UInt8>) -> IPAddress? {
        if bytes.contains(colon) { return parseIPv6(bytes) }
        return parseIPv4(bytes).map { IPAddress(ipv4: $0) }
    }

    /// Exactly four decimal parts of 0...255 joined by single dots, no leading zeros.
    static func parseIPv4(_ bytes: ArraySlice<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var part: UInt32 = 0
        var digits = 0
        var parts = 0
        for byte in bytes {
            if byte == dot {
                guard digits > 0, parts < 3 else { return nil }
                value = value << 8 | part
                parts += 1
                part = 0
                digits = 0
                continue
            }
            // `digits == 1 && part == 0`: a zero followed by more digits.
            guard let digit = decimalDigit(byte), !(digits == 1 && part == 0) else { return nil }
            part = part * 10 + UInt32(digit)
            digits += 1
            guard digits <= 3, part <= 255 else { return nil }
        }
        guard digits > 0, parts == 3 else { return nil }
        return value << 8 | part
    }

    /// Eight groups of one to four hex digits, at most one `::` standing for one or more zero
    /// groups, and optionally a dotted IPv4 address as the last 32 bits.
    static func parseIPv6(_ bytes: ArraySlice<UInt8>) -> IPAddress? {
        var groups: [UInt16] = []
        groups.reserveCapacity(8)
        var gapIndex: Int?
        var index = bytes.startIndex
        let end = bytes.endIndex
        if bytes.starts(with: [colon, colon]) {
            gapIndex = 0
            index += 2
        } else if bytes.first == colon {
            return nil
        }
        while index < end {
            let groupStart = index
            var group: UInt32 = 0
            var digits = 0
            while index < end, let digit = hexDigit(bytes[index]) {
                group = group << 4 | UInt32(digit)
                digits += 1
                index += 1
                guard digits <= 4 else { return nil }
            }
            if index < end, bytes[index] == dot {
                // An embedded IPv4 address ends the text and fills the last two groups.
                guard groups.count <= 6, let ipv4 = parseIPv4(bytes[groupStart...]) else { return nil }
                groups.append(UInt16(ipv4 >> 16))
                groups.append(UInt16(ipv4 & 0xFFFF))
                index = end
                break
            }
            guard digits > 0, groups.count < 8 else { return nil }
            groups.append(UInt16(group))
            if index == end { break }
            guard bytes[index] == colon else { return nil }
            index += 1
            if index < end, bytes[index] == colon {
                guard gapIndex == nil else { return nil }
                gapIndex = groups.count
                index += 1
            } else if index == end {
                return nil   // a single trailing colon
            }
        }
        if let gapIndex {
            guard groups.count <= 7 else { return nil }
            groups.insert(contentsOf: repeatElement(0, count: 8 - groups.count), at: gapIndex)
        }
        guard groups.count == 8 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        for group in groups[0..<4] { high = high << 16 | UInt64(group) }
        for group in groups[4..<8] { low = low << 16 | UInt64(group) }
        return IPAddress(ipv6High: high, low: low)
    }

    static func dotted(_ value: UInt32) -> String {
        "\(value >> 24).\(value >> 16 & 0xFF).\(value >> 8 & 0xFF).\(value & 0xFF)"
    }

    /// RFC 5952: lower-case hex without leading zeros, the longest run of two or more zero
    /// groups (the first of equal runs) as `::`, and an IPv4-mapped address with a dotted tail.
    static func ipv6(high: UInt64, low: UInt64) -> String {
        if high == 0, low >> 32 == 0xFFFF { return "::ffff:" + dotted(UInt32(truncatingIfNeeded: low)) }
        let groups = (0..<8).map { index -> UInt16 in
            let word = index < 4 ? high : low
            return UInt16(truncatingIfNeeded: word >> (UInt64(3 - index % 4) * 16))
        }
        var bestStart = -1, bestLength = 0, runStart = -1
        for index in 0...8 {
            if index < 8, groups[index] == 0 {
                if runStart < 0 { runStart = index }
            } else if runStart >= 0 {
                if index - runStart > bestLength { bestStart = runStart; bestLength = index - runStart }
                runStart = -1
            }
        }
        if bestLength < 2 { bestStart = -1 }
        var text = ""
        var index = 0
        while index < 8 {
            if index == bestStart {
                text += "::"
                index += bestLength
                continue
            }
            if !text.isEmpty, !text.hasSuffix(":") { text += ":" }
            text += String(groups[index], radix: 16)
            index += 1
        }
        return text
    }

    static func decimalDigit(_ byte: UInt8) -> UInt8? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? byte - UInt8(ascii: "0") : nil
    }

    static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
