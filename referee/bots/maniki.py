"""MaNiKi's bots: a race the referee must not let a machine spoil.

Any card can be solved at once by a search of the 24 arrangements, so a bot
that answered first with the shortest sequence would win every card before
a person had read it. The levels are ruled instead (docs/rules/maniki.md):

- a bot answers a card only once every person still in its round has
  answered, so people always get the first go at a card;
- it sees a solution only up to a length that grows with its level
  (`greedy` two orders, `strong` three, `expert` every card), and passes
  on a card it cannot see through; `random` calls a random walk of orders.

The deck order is the only hidden part and plays no role here: a bot's
answer depends on the arrangement, the card and its level.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee.bots.knowledge import Seen
from referee.bots.levels import Bot
from referee.games import maniki
from referee.rng import Rng

# How long a solution each level sees through; `expert` sees every card (the
# longest shortest solution has five orders).
LONGEST_SEEN = {"greedy": 2, "strong": 3, "expert": maniki.MAX_ORDERS}


def _waits_for_people(seen: Seen) -> bool:
    """Whether a person in the round has yet to answer this card."""
    return any(seat != seen.seat and seat not in seen.bots for seat in seen.view["in_round"])


@dataclass(frozen=True)
class RandomCaller:
    """A random walk of one to six orders the animals can carry out, or now
    and then a pass: it lands on the card by luck only."""

    def waits(self, seen: Seen) -> bool:
        return _waits_for_people(seen)

    def choose(self, seen: Seen, rng: Rng, seconds: float) -> Any:
        if seen.view["target"] is None or rng.below(10) == 0:
            return maniki.Pass()
        card = seen.view["position"]
        orders: list[str] = []
        for _ in range(1 + rng.below(6)):
            order = rng.choice(maniki.possible_orders(card, expert=seen.view["expert"]))
            orders.append(order)
            card = maniki.apply_orders(card, (order,)) or card
        return maniki.Call(tuple(orders))


@dataclass(frozen=True)
class Solver:
    """The shortest sequence to the card when it is at most `longest` orders; a pass otherwise."""

    longest: int

    def waits(self, seen: Seen) -> bool:
        return _waits_for_people(seen)

    def choose(self, seen: Seen, rng: Rng, seconds: float) -> Any:
        view = seen.view
        if view["target"] is None:
            return maniki.Pass()
        solution = maniki.shortest_solution(view["position"], view["target"], expert=view["expert"])
        return maniki.Call(solution) if len(solution) <= self.longest else maniki.Pass()


LEVELS: dict[str, Bot] = {
    "random": RandomCaller(),
    **{level: Solver(longest) for level, longest in LONGEST_SEEN.items()},
}
