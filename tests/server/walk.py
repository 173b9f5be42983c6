from goto import goto

@goto
def walk(items):
    s = 'é𝄞'
    for item in items:
        with open(item) as f:
            if f.read():
                goto .done
    goto .done
    label .done
    return s

def plain():
    label .unused
