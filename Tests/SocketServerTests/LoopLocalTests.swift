// `EventLoop.local`: one object per type per loop, for scratch space its connections share.
import Testing
@testable import SocketServer

extension SocketServerTests {
    @Suite struct LoopLocalTests {
        final class Scratch {
            static let key = LoopLocal { Scratch() }
            var uses = 0
        }

        final class OtherScratch {
            static let key = LoopLocal { OtherScratch() }
        }

        @Test func aLoopMakesOneInstancePerTypeAndKeepsIt() async {
            let group = EventLoopGroup(count: 2)
            let (first, second) = (group.loops[0], group.loops[1])
            let made = await withCheckedContinuation { (done: CheckedContinuation<(ObjectIdentifier, Int, Bool), Never>) in
                first.execute {
                    let one = first.local(Scratch.key)
                    one.uses += 1
                    let again = first.local(Scratch.key)
                    again.uses += 1
                    let other = first.local(OtherScratch.key)
                    done.resume(returning: (ObjectIdentifier(one), again.uses,
                                            one === again && ObjectIdentifier(other) != ObjectIdentifier(one)))
                }
            }
            #expect(made.1 == 2, "made on first use only: both uses reached one instance")
            #expect(made.2, "the same instance every time, another for another key")
            let onSecond = await withCheckedContinuation { (done: CheckedContinuation<(ObjectIdentifier, Int), Never>) in
                second.execute {
                    let scratch = second.local(Scratch.key)
                    done.resume(returning: (ObjectIdentifier(scratch), scratch.uses))
                }
            }
            #expect(onSecond.0 != made.0, "each loop has its own")
            #expect(onSecond.1 == 0)
        }
    }
}
