// An include with an error on line 5.
float helper(float x) {
    float y = x * 2.0;
    // the next line uses an undeclared name
    return y + undeclaredThing;
}
