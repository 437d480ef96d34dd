"""The order grammar of docs/forensics.md read from its text, written from the documentation
(not cce's parser): a rank number, or parentheses around operands joined by ``+`` (one
rounding). The tests that re-evaluate cce's orders in numpy share it."""


def parse(expr):
    """The grammar's tree: an int (a rank) or a list of operands (one rounding)."""
    pos = 0

    def node():
        nonlocal pos
        if expr[pos] == "(":
            pos += 1
            kids = [node()]
            while expr[pos] == "+":
                pos += 1
                kids.append(node())
            assert expr[pos] == ")", expr
            pos += 1
            return kids
        start = pos
        while pos < len(expr) and expr[pos].isdigit():
            pos += 1
        return int(expr[start:pos])

    tree = node()
    assert pos == len(expr), expr
    return tree
