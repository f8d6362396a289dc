// A minimal SVG writer: elements appended as text, every piece of text escaped, so whatever a
// metric or parameter is called the file stays well-formed XML. No styling beyond attributes,
// so the picture needs nothing but itself.

struct SVGDocument {
    let width: Int
    let height: Int
    private var body: [String] = []

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }

    static func number(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    mutating func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, color: String = "#888",
                       width: Double = 1, dashed: Bool = false) {
        body.append("<line x1=\"\(Self.number(x1))\" y1=\"\(Self.number(y1))\" x2=\"\(Self.number(x2))\" y2=\"\(Self.number(y2))\""
                    + " stroke=\"\(color)\" stroke-width=\"\(Self.number(width))\"" + (dashed ? " stroke-dasharray=\"4 3\"" : "") + "/>")
    }

    mutating func polyline(_ points: [(x: Double, y: Double)], color: String, width: Double = 2) {
        guard !points.isEmpty else { return }
        let text = points.map { "\(Self.number($0.x)),\(Self.number($0.y))" }.joined(separator: " ")
        body.append("<polyline points=\"\(text)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(Self.number(width))\" stroke-linejoin=\"round\"/>")
    }

    mutating func circle(_ x: Double, _ y: Double, radius: Double, color: String) {
        body.append("<circle cx=\"\(Self.number(x))\" cy=\"\(Self.number(y))\" r=\"\(Self.number(radius))\" fill=\"\(color)\"/>")
    }

    mutating func rectangle(_ x: Double, _ y: Double, _ width: Double, _ height: Double, fill: String, stroke: String = "none") {
        body.append("<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(width))\" height=\"\(Self.number(height))\""
                    + " fill=\"\(fill)\" stroke=\"\(stroke)\"/>")
    }

    enum Anchor: String { case start, middle, end }

    mutating func text(_ content: String, _ x: Double, _ y: Double, size: Int = 12, anchor: Anchor = .start,
                       color: String = "#222", isBold: Bool = false, rotated: Bool = false) {
        var attributes = "x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" font-size=\"\(size)\" text-anchor=\"\(anchor.rawValue)\" fill=\"\(color)\""
        if isBold { attributes += " font-weight=\"bold\"" }
        if rotated { attributes += " transform=\"rotate(-90 \(Self.number(x)) \(Self.number(y)))\"" }
        body.append("<text \(attributes)>\(Self.escaped(content))</text>")
    }

    var rendered: String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\""
            + " font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
            + "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
            + body.joined(separator: "\n") + "\n</svg>\n"
    }
}
