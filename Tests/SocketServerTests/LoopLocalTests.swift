// `EventLoop.local`: one object per type per loop, for scratch space its connections share.
import Testing
@testable import SocketServer

extension SocketServerTests {
    @Suite struct LoopLocalTests {
        final class Scratch { var uses = 0 }
        final class OtherScratch {}

        @Test func aLoopMakesOneInstancePerTypeAndKeepsIt() async {
            let group = EventLoopGroup(count: 2)
            let (first, second) = (group.loops[0], group.loops[1])
            let made = await withCheckedContinuation { (done: CheckedContinuation<(ObjectIdentifier, Int, Bool), Never>) in
                first.execute {
                    var makes = 0
                    let one = first.local { () -> Scratch in makes += 1; return Scratch() }
                    one.uses += 1
                    let again = first.local { () -> Scratch in makes += 1; return Scratch() }
                    again.uses += 1
                    let other = first.local { OtherScratch() }
                    done.resume(returning: (ObjectIdentifier(one), makes,
                                            one === again && again.uses == 2 && ObjectIdentifier(other) != ObjectIdentifier(one)))
                }
            }
            #expect(made.1 == 1, "made on first use only")
            #expect(made.2, "the same instance every time, another for another type")
            let onSecond = await withCheckedContinuation { (done: CheckedContinuation<(ObjectIdentifier, Int), Never>) in
                second.execute {
                    let scratch = second.local { Scratch() }
                    done.resume(returning: (ObjectIdentifier(scratch), scratch.uses))
                }
            }
            #expect(onSecond.0 != made.0, "each loop has its own")
            #expect(onSecond.1 == 0)
        }
    }
}
