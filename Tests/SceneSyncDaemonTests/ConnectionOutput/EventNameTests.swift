import NIOCore
import Testing

@testable import SceneSyncDaemon

@Suite struct EventNameTests {
    @Test(arguments: EventName.allCases)
    func prefixIsTheEnvelopeOfItsName(_ name: EventName) {
        #expect(name.linePrefix.description == #"{"event":""# + name.rawValue + #"","subscription":"#)
    }

    @Test(arguments: [UInt64(0), 7, 10, 99, 12_345, UInt64.max])
    func eventLineHasTheSubscriptionsDigitsAndTheSharedBody(_ subscription: UInt64) {
        var buffer = ByteBufferAllocator().buffer(capacity: 0)
        ConnectionOutput.Item.event(subscription: subscription, name: .change, body: Array(#""scene":"a""#.utf8))
            .write(to: &buffer)
        ConnectionOutput.Item.event(subscription: subscription, name: .synced, body: []).write(to: &buffer)
        #expect(
            String(buffer: buffer)
                == #"{"event":"change","subscription":\#(subscription),"scene":"a"}"# + "\n"
                + #"{"event":"synced","subscription":\#(subscription)}"# + "\n")
    }
}
