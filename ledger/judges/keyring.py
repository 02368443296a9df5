"""The judge of the ``keyring`` stream: the key ring itself (``ledger.keyring.KeyRing``)
checks a registration, rotation or revocation against the ring as it stands and applies
it; later events of the run are then authorized by the ring as changed."""

from __future__ import annotations

from ledger.events import SignedEvent
from ledger.judges import BaseJudge, World, register_judge


class KeyRingJudge(BaseJudge):
    stream_types = ("keyring",)

    def admit(self, state: None, ev: SignedEvent, world: World) -> None:
        world.ring.apply(ev)  # checks the event against the ring, then changes it (World's own ring)


register_judge(KeyRingJudge())
