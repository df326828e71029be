/// One line of a connection's input as the engine serves it, in order: a parsed request, or the ready error answer
/// for a line that is not a valid request.
enum InboundRequest: Sendable {
    case request(Request)
    case answer([UInt8])
}

extension InboundRequest: ReadGateItem {
    var isReadyAnswer: Bool {
        if case .answer = self { true } else { false }
    }
}
